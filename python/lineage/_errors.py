# SPDX-License-Identifier: MIT
"""Exceptions: one class per liblineage error code, named after it (docs/python.md)."""


class Error(Exception):
    """A liblineage call failed. ``code`` is the positive error code (4001.. for the
    library's own, an errno otherwise); ``name`` its C name (``"LIN_ESTALE_TOKEN"``)."""

    def __init__(self, message="", code=0, name="?"):
        super().__init__(message)
        self.code = code
        self.name = name

    def __reduce__(self):
        return (type(self), (str(self), self.code, self.name))

    def __str__(self):
        msg = super().__str__()
        return f"{msg} ({self.name})" if self.name and self.name != "?" else msg


class InvalidArgument(Error, ValueError):
    """EINVAL: a bad argument, or a call on a closed runtime or tracker."""


def _make(names):
    made = {}
    for cls_name, (c_name, _code) in names.items():
        doc = f"{c_name}: raised where the C call returns -{c_name}."
        made[cls_name] = type(cls_name, (Error,), {"__doc__": doc, "__module__": "lineage"})
    return made
