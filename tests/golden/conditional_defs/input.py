import sys

if sys.platform == "win32":

    def path_sep() -> str:  # expect: SVC-R002
        return "\\"

else:

    def path_sep() -> str:  # expect: SVC-R006
        return "/"


try:
    from math import isqrt  # expect: SVC-R002
except ImportError:

    def isqrt(n: int) -> int:  # expect: SVC-R006
        return int(n**0.5)


for _name in ("a", "b"):  # expect: SVC-R007

    def generated(x: int) -> int:  # expect: SVC-R006
        return x


def stable(x: int) -> int:
    return x
