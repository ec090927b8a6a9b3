"""svc-oci: builds a service image from a direct repository bundle on a local engine, and
publishes it to a registry (``push``).

Run by ``svc plugins run svc-oci build``: one ``svc.extension/v1`` request on stdin, one
response on stdout (``__main__``). The operations are ``svc_oci.build`` and ``svc_oci.push``.
"""

__version__ = "0.4.1"
