"""Image inputs the oci target and the svc-oci extension share: the wheel lock, image
references, the lock-against-requirements check and the refusal codes."""
