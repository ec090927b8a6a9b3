"""``sha256:`` digests are the same whichever implementation computes them: the built-in one
for what a process hashes first (no OpenSSL to load at start), OpenSSL's past the budget."""

import hashlib

import pytest
from svcc.ir import canonical


@pytest.mark.parametrize("size", [0, 3, 1000, canonical.BUILTIN_BYTES + 1, 3 << 20])
def test_a_digest_is_sha256_of_the_bytes(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "_hashed", [0])
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    expected = "sha256:" + hashlib.sha256(data).hexdigest()
    assert canonical.digest_bytes(data) == expected
    assert canonical.digest_bytes(data) == expected  # the budget spent by now, or not


@pytest.mark.skipif(canonical._BUILTIN is None, reason="an interpreter without _sha2/_sha256")
def test_openssl_takes_over_past_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "_hashed", [0])
    assert type(canonical.sha256(10)) is not type(hashlib.sha256())
    assert type(canonical.sha256(canonical.BUILTIN_BYTES)) is type(hashlib.sha256())
