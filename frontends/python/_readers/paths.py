"""Paths built from ``__file__`` (see ``_file_paths``): which file a call reads, as the
module's names and pathlib/``os.path`` calls build it."""

import ast

from svcc.frontends.python._file_paths import (
    FILE,
    FilePath,
    ir_path,
    join,
    normalised,
    parent,
    with_name,
)
from svcc.frontends.python._readers.symbols import SymbolReader
from svcc.frontends.python.data_reads import path_operand


class PathReader(SymbolReader):
    def _read_path(self, call: ast.Call) -> str | None:
        """The file a call reads through a path built from ``__file__`` (see
        ``Evaluation.path``; absolute when an absolute part restarted it): its receiver's
        path for a method, else its first argument's."""
        path = self._read_file_path(call)
        return None if path is None else ir_path(path)

    def _read_file_path(self, call: ast.Call) -> FilePath | None:
        func = call.func
        if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name | ast.Attribute):
            return self._path_of(func.value)
        if isinstance(func, ast.Attribute) and self.symbols.qualify(func) is None:
            return self._path_of(func.value)
        callee = self.symbols.qualify(func)
        operand = call.args[0] if call.args else None
        if callee in ("builtins.open", "io.open"):
            operand = path_operand(call, callee)  # open(file=p) too
            mode = call.args[1] if len(call.args) > 1 else None
            for keyword in call.keywords:
                if keyword.arg == "mode":
                    mode = keyword.value
            if mode is not None and not (
                isinstance(mode, ast.Constant)
                and isinstance(mode.value, str)
                and set(mode.value) <= set("rbt")
            ):
                return None
        return None if operand is None else self._path_of(operand)

    def _path_of(self, node: ast.expr) -> FilePath | None:
        """``node`` as a path built from ``__file__`` and literals (see ``_file_paths``)."""
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return FILE
            return self._paths.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            base = self._path_of(node.left)
            if base is None or not (
                isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)
            ):
                return None
            return join(base, node.right.value)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            base = self._path_of(node.value)
            return None if base is None else parent(base)
        if isinstance(node, ast.Subscript):  # Path(__file__).parents[1]
            return self._parents(node)
        if isinstance(node, ast.Call):
            return self._called_path(node)
        return None

    def _called_path(self, node: ast.Call) -> FilePath | None:
        """A call building a path: a pathlib constructor or an ``os.path`` function, or a
        method of a path."""
        func = node.func
        qual = self.symbols.qualify(func) if isinstance(func, ast.Name | ast.Attribute) else None
        literals = [
            a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        if qual in _PATH_CONSTRUCTORS | _PATH_SAME and node.args:
            base = self._path_of(node.args[0])
            return normalised(base) if base is not None and qual in _PATH_NORMAL else base
        if qual == "os.path.dirname" and node.args:
            base = self._path_of(node.args[0])
            return None if base is None else parent(base)
        if qual == "os.path.join" and node.args:
            base = self._path_of(node.args[0])
            if len(literals) != len(node.args) - 1:
                return None
            for piece in literals:
                base = join(base, piece) if base is not None else None
            return base
        if isinstance(func, ast.Attribute) and qual is None:
            return self._path_method(node, func, literals)
        return None

    def _path_method(
        self, node: ast.Call, func: ast.Attribute, literals: list[str]
    ) -> FilePath | None:
        """``path.resolve()``, ``.absolute()``, ``.joinpath(...)``, ``.with_name(...)``."""
        base = self._path_of(func.value)
        if base is None:
            return None
        if func.attr in ("resolve", "absolute") and not node.args:
            return normalised(base) if func.attr == "resolve" else base
        if func.attr == "joinpath" and len(literals) == len(node.args):
            for part in literals:
                base = join(base, part) if base is not None else None
            return base
        if func.attr == "with_name" and len(literals) == len(node.args) == 1:
            return with_name(base, literals[0])
        return None

    def _parents(self, node: ast.Subscript) -> FilePath | None:
        """``path.parents[n]`` for a literal ``n`` from 0: ``n + 1`` folders up."""
        if not (isinstance(node.value, ast.Attribute) and node.value.attr == "parents"):
            return None
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0):
            return None
        base = self._path_of(node.value.value)
        for _ in range(index.value + 1):
            base = parent(base) if base is not None else None
        return base


_PATH_CONSTRUCTORS = frozenset(
    {"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath"}
)


_PATH_SAME = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath"})


_PATH_NORMAL = _PATH_SAME - {"os.fspath"}  # these collapse ``..`` (os.fspath keeps the text)


def module_path(path: str | None) -> str | None:
    """``path`` when it is the module's or relative to its folder: an absolute one names a
    file of the machine, judged at import as any read (as ``open("/etc/hostname")``)."""
    return None if path is None or path.startswith("/") else path
