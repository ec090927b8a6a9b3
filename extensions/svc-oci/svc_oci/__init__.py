"""svc-oci: builds a service image from a direct repository bundle on a local engine.

Run by ``svc plugins run svc-oci build``: one ``svc.extension/v1`` request on stdin, one
response on stdout (``__main__``). The build itself is ``svc_oci.build``.
"""

__version__ = "0.4.1"
