import secrets


def fresh_name() -> str:
    """A collection name no test has used: the tests share one tenant."""
    return f"py-{secrets.token_hex(6)}"
