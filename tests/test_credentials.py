"""Credentials in page text (memtui.credentials): found by kind and line, never echoed."""

from __future__ import annotations

import pytest

from memtui.credentials import find_secrets, line_secrets

FOUND = [
    ("The staging password: hunter2-Blue7", "password or secret"),
    ("db_pass = 'Xk9#vvq2LmP'", "password or secret"),
    ("AWS key AKIAIOSFODNN7EXAMPLE for the deploy role", "AWS Access Key"),
    ("token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "GitHub Token"),
    ("Connect with postgres://admin:s3cr3tPw@db.internal:5432/app", "Basic Auth Credentials"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "Private Key"),
    ("Stripe: sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "Stripe Access Key"),
]

NOT_FOUND = [
    "The password is in the team vault.",
    "Commit 3f9a2c4e8b1d7f6a5c3e2b1a0f9e8d7c6b5a4f3e fixed it.",
    "password: <your password here>",
    "api_key: ${API_KEY}",
    "Use a token bucket for the rate limiter.",
    "Deploy on Fridays. [stated]",
    "LINEAR_API_KEY=your_key",  # documentation's placeholders (seen in a real memory bank)
    "export LINEAR_API_KEY=your_linear_api_key_here",
    'api_key = "sk_test_placeholder123"',
    'API_KEY = os.environ.get("API_KEY")',  # code reading a secret from the environment
    "- [ ] Passwords: Argon2/bcrypt",
    "STRIPE_API_KEY=sk_test_...",
    "- Email: `admin@medusa.dev` / Password: `password`",  # the key named again, no value
]


@pytest.mark.parametrize(("line", "kind"), FOUND)
def test_a_credential_is_found_by_kind(line: str, kind: str) -> None:
    assert kind in line_secrets(line)


@pytest.mark.parametrize("line", NOT_FOUND)
def test_prose_placeholders_and_hashes_are_no_secret(line: str) -> None:
    assert line_secrets(line) == []


def test_find_secrets_names_lines_not_values() -> None:
    text = "# Notes\n\nNothing here.\nThe staging password: hunter2-Blue7\n\nMore prose.\n"
    found = find_secrets(text, first_line=5)
    assert found == [(8, "password or secret")]
    assert all("hunter2" not in kind for _line, kind in found)


def test_a_huge_line_is_read_in_windows() -> None:
    line = "x " * 10_000 + "AKIAIOSFODNN7EXAMPLE" + " y" * 10_000
    assert "AWS Access Key" in line_secrets(line)


def test_odd_text_never_raises() -> None:
    for text in ("\x00\x1b[2J password=\udcff", "key" * 50_000, "://a:b@" * 1000, ""):
        find_secrets(text)


def test_no_other_finding_repeats_a_secret(tmp_path) -> None:
    """A ``stated-uncited`` or ``tag-promoted`` finding quotes its claim: never one holding a secret."""
    from tests.helpers_field import findings, make_field

    root = make_field(tmp_path / "f", {"notes/a.md": "The staging password: hunter2-Blue7 [stated]\n"})
    found = findings(root)
    assert {f.rule for f in found} >= {"secret", "stated-uncited"}
    assert not [f for f in found if "hunter2" in f.message]
