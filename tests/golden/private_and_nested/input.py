def _private(x: int) -> int:
    return x


class Tool:
    def method(self, x: int) -> int:
        return x


square = lambda x: x * x  # noqa: E731


def public(x: int) -> int:
    def nested(y: int) -> int:
        return y

    return nested(x)
