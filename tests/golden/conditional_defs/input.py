import sys

if sys.platform == "win32":

    def path_sep() -> str:  # decided for the Linux target: the dead branch is not judged
        return "\\"

else:

    def path_sep() -> str:
        return "/"


try:
    from math import isqrt  # the standard library provides it: the fallback never runs
except ImportError:

    def isqrt(n: int) -> int:
        return int(n**0.5)


try:
    from simplejson import dumps  # expect: SVC-R002
except ImportError:

    def dumps(n: int) -> str:  # expect: SVC-R006
        return str(n)


for _name in ("a", "b"):  # expect: SVC-R007

    def generated(x: int) -> int:  # expect: SVC-R006
        return x


def stable(x: int) -> int:
    return x
