def uses_unknown(item: Widget) -> int:  # expect: SVC-R012 SVC-R023
    return 0


def uses_invalid(item: [int]) -> int:  # expect: SVC-R012
    return 0


def uses_forward(item: "Gadget") -> int:  # expect: SVC-R012
    return 0


def bad_string(item: "list[") -> int:  # expect: SVC-R012
    return 0
