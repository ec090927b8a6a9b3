"""The request schema a capability gets, for tools that show it without building a bundle
(the language server's hover). The one lowering stays in ``_common.schema``; this is its
public door, so nothing outside the back ends imports their private package."""

from svcc.backends._common.schema import LoweringError, RequestSchema, request_schema

__all__ = ["LoweringError", "RequestSchema", "request_schema"]
