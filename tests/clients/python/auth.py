"""Protected-resource authentication, driven with the Python SDK: the server `tasks-auth-mcp`
(tests/fixtures/auth.yaml) accepts a static bearer token, an X-Api-Key header and OAuth access
tokens (ES256 JWTs) signed by the key `keygen` writes next to its JWKS.

    auth.py keygen --dir DIR     writes DIR/key.pem, DIR/other.pem and DIR/jwks.json
    auth.py check --url URL --dir DIR --token T --api-key K

`check` mints tokens with the test key and checks every answer the MCP authorization spec asks
for: no token, valid, expired, not yet valid, wrong audience, wrong issuer, missing scope (for
every request, and for tools/call only), unsigned, signed by another key, wrong token type; the
401/403 challenges; the protected-resource metadata; the static token and the custom header.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Failure, check, run  # noqa: E402

import mcp  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

RESOURCE = "https://tasks.example.test/mcp"
ISSUER = "https://auth.example.test/realms/tasks"
METADATA = "https://tasks.example.test/.well-known/oauth-protected-resource/mcp"
KID = "test-key"
SCOPES = "tasks:read tasks:run"

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "auth.py", "version": "1"},
    },
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def keygen(directory: str) -> None:
    """A signing key, an unrelated key, and the JWKS that holds only the first's public half."""
    for name in ("key.pem", "other.pem"):
        key = ec.generate_private_key(ec.SECP256R1())
        with open(os.path.join(directory, name), "wb") as f:
            f.write(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
        if name == "key.pem":
            public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
            public.update({"kid": KID, "use": "sig", "alg": "ES256"})
            with open(os.path.join(directory, "jwks.json"), "w", encoding="utf-8") as f:
                json.dump({"keys": [public]}, f)
    print("keygen: key.pem, other.pem, jwks.json")


def load_key(path: str) -> Any:
    with open(path, "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def mint(directory: str, **overrides: Any) -> str:
    """An access token: valid unless `overrides` change a claim (None removes it) or the key,
    header type or algorithm (`_key`, `_typ`, `_alg`)."""
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "user-1",
        "client_id": "https://client.example.test/metadata.json",
        "iat": now,
        "nbf": now - 5,
        "exp": now + 300,
        "scope": SCOPES,
    }
    key_file = overrides.pop("_key", "key.pem")
    typ = overrides.pop("_typ", "at+jwt")
    alg = overrides.pop("_alg", "ES256")
    for name, value in overrides.items():
        if value is None:
            claims.pop(name, None)
        else:
            claims[name] = value
    if alg == "none":
        return jwt.encode(claims, None, algorithm="none", headers={"kid": KID, "typ": typ})
    key = load_key(os.path.join(directory, key_file))
    return jwt.encode(claims, key, algorithm=alg, headers={"kid": KID, "typ": typ})


def post(url: str, headers: dict[str, str], body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(url, headers={**HEADERS, **headers}, json=body, timeout=10)


def challenge(response: httpx2.Response) -> str:
    return response.headers.get("www-authenticate", "")


async def session(url: str, headers: dict[str, str]) -> list[str]:
    """Connects with the SDK sending `headers` on every request; lists the tools and calls
    task_list. Returns the tool names."""
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with mcp.Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_tools()
            names = [tool.name for tool in listed.tools]
            # auth.yaml sets `structured_output: false`: no outputSchema, text-only results.
            for tool in listed.tools:
                check(tool.output_schema is None, f"{tool.name} declares an outputSchema")
            result = await client.call_tool("task_list", {})
            check(not result.is_error, f"task_list failed: {result.content!r}")
            check(result.structured_content is None, f"structuredContent {result.structured_content!r}")
            text = result.content[0].text if result.content else ""
            keys = set(json.loads(text)) if text.startswith("{") else set()
            check({"command", "exit_code", "output", "truncated"} <= keys, f"result text {text!r}")
            return names


async def refused_session(url: str, headers: dict[str, str], needle: str, what: str) -> None:
    """The SDK cannot use the server with `headers`; its error carries `needle`."""
    try:
        await session(url, headers)
    except Failure:
        raise
    except BaseException as error:  # noqa: BLE001 - the SDK raises its own error types
        text = repr(error)
        if hasattr(error, "exceptions"):
            text += " " + " ".join(repr(e) for e in error.exceptions)  # type: ignore[attr-defined]
        check(needle in text, f"{what}: the SDK failed, but not with {needle!r}: {text}")
        print(f"{what}: the SDK client was refused ({needle})")
        return
    raise Failure(f"{what}: the SDK client was let in")


async def main(args: argparse.Namespace) -> None:
    url, directory = args.url, args.dir
    origin = url.split("/mcp")[0]

    # No credentials: 401 naming the metadata document and the scopes, without an error code.
    response = post(url, {}, INITIALIZE)
    check(response.status_code == 401, f"no token: {response.status_code} {response.text}")
    expected = f'Bearer resource_metadata="{METADATA}", scope="{SCOPES}"'
    check(challenge(response) == expected, f"no token: challenge {challenge(response)!r}")
    check(response.json()["error"]["code"] == -32001, f"no token: body {response.text}")
    print(f"no token: 401 {challenge(response)}")
    await refused_session(url, {}, "Unauthorized: a bearer token is required", "no token")
    # A group's endpoint is behind the same check.
    response = post(f"{url}/task", {}, INITIALIZE)
    check(response.status_code == 401, f"no token on /mcp/task: {response.status_code} {response.text}")
    check(challenge(response) == expected, f"no token on /mcp/task: challenge {challenge(response)!r}")
    print("no token on /mcp/task: 401")

    # The protected-resource metadata, at the path URI, the root URI and a group's path URI,
    # without credentials: the same document (a group's URL lies under the resource).
    paths = ("/mcp", "", "/mcp/task")
    for path in (f"/.well-known/oauth-protected-resource{p}" for p in paths):
        document = httpx2.get(origin + path, timeout=10)
        check(document.status_code == 200, f"{path}: {document.status_code}")
        body = document.json()
        check(body["resource"] == RESOURCE, f"{path}: {body}")
        check(body["authorization_servers"] == [ISSUER], f"{path}: {body}")
        check(body["scopes_supported"] == SCOPES.split(), f"{path}: {body}")
        check(body["bearer_methods_supported"] == ["header"], f"{path}: {body}")
    print(f"metadata: {json.dumps(body, sort_keys=True)}")

    # A valid access token: a whole session with the SDK.
    token = mint(directory)
    names = await session(url, {"Authorization": f"Bearer {token}"})
    check("task_list" in names, f"valid token: tools {names}")
    print(f"valid token: listed {' '.join(names)} and called task_list")
    # On a group's endpoint, with the same token: that group's tools only.
    names = await session(f"{url}/task", {"Authorization": f"Bearer {token}"})
    check(all(n.startswith("task_") for n in names), f"/mcp/task: tools {names}")
    print(f"valid token on /mcp/task: listed {' '.join(names)} and called task_list")

    # Invalid tokens: 401 invalid_token with the reason, and the SDK is refused.
    now = int(time.time())
    bad = [
        ("expired", mint(directory, exp=now - 600, iat=now - 900, nbf=now - 900), "the token has expired"),
        ("not yet valid", mint(directory, nbf=now + 600), "the token is not valid yet (nbf)"),
        ("wrong audience", mint(directory, aud="https://other.example.test/mcp"),
         f"the token's audience is not this server ({RESOURCE})"),
        ("no audience", mint(directory, aud=None), "the token has no aud claim"),
        ("wrong issuer", mint(directory, iss="https://evil.example.test"),
         f"the token's issuer is not an accepted authorization server ({ISSUER})"),
        ("unsigned", mint(directory, _alg="none"), "the token is not a signed JWT (unsigned tokens are refused)"),
        ("another key", mint(directory, _key="other.pem"), "the token's signature does not verify"),
        ("wrong type", mint(directory, _typ="JWT"), "the token type \"JWT\" is not accepted (expected at+jwt or application/at+jwt)"),
        ("not a JWT", "s3cret-but-wrong", "the token is not a signed JWT (unsigned tokens are refused)"),
    ]
    for what, token, reason in bad:
        response = post(url, {"Authorization": f"Bearer {token}"}, INITIALIZE)
        check(response.status_code == 401, f"{what}: {response.status_code} {response.text}")
        expected = (
            f'Bearer resource_metadata="{METADATA}", scope="{SCOPES}", error="invalid_token", '
            f'error_description="{reason}"'
        ).replace('"JWT"', "'JWT'")
        check(challenge(response) == expected, f"{what}: challenge {challenge(response)!r}, expected {expected!r}")
        print(f"{what}: 401 invalid_token ({reason})")
        await refused_session(url, {"Authorization": f"Bearer {token}"}, reason, what)

    # A valid token without a scope every request needs: 403 insufficient_scope.
    token = mint(directory, scope="tasks:run")
    response = post(url, {"Authorization": f"Bearer {token}"}, INITIALIZE)
    check(response.status_code == 403, f"missing scope: {response.status_code} {response.text}")
    expected = (
        f'Bearer error="insufficient_scope", scope="tasks:read", resource_metadata="{METADATA}", '
        'error_description="the access token lacks the scope tasks:read"'
    )
    check(challenge(response) == expected, f"missing scope: {challenge(response)!r}")
    print("missing scope: 403 insufficient_scope (tasks:read)")
    await refused_session(
        url, {"Authorization": f"Bearer {token}"}, "the access token lacks the scope tasks:read", "missing scope"
    )

    # A token that may list but not call: tools/call alone is refused, naming every scope.
    token = mint(directory, scope="tasks:read")
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "task_list", "arguments": {}}}
    response = post(url, {"Authorization": f"Bearer {token}"}, call)
    check(response.status_code == 403, f"read-only token calling: {response.status_code} {response.text}")
    check('scope="tasks:read tasks:run"' in challenge(response), f"call scope: {challenge(response)!r}")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with mcp.Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_tools()
            check(len(listed.tools) > 0, "read-only token: no tools listed")
            try:
                await client.call_tool("task_list", {})
            except Exception as error:  # noqa: BLE001 - the SDK's error for a 403
                check("tasks:run" in str(error), f"read-only token calling: {error!r}")
            else:
                raise Failure("a token without tasks:run called a tool")
    print("scope per method: tools/list allowed, tools/call 403 (tasks:run)")

    # The static bearer token and the custom header (what fx sends with header_env).
    names = await session(url, {"Authorization": f"Bearer {args.token}"})
    print(f"static token: listed {len(names)} tools")
    names = await session(url, {"X-Api-Key": args.api_key})
    print(f"X-Api-Key header: listed {len(names)} tools")
    response = post(url, {"X-Api-Key": args.api_key + "x"}, INITIALIZE)
    check(response.status_code == 401, f"wrong header value: {response.status_code}")
    print("wrong X-Api-Key: 401")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("keygen")
    gen.add_argument("--dir", required=True)
    chk = sub.add_parser("check")
    chk.add_argument("--url", required=True)
    chk.add_argument("--dir", required=True)
    chk.add_argument("--token", required=True)
    chk.add_argument("--api-key", required=True)
    arguments = parser.parse_args()
    if arguments.command == "keygen":
        keygen(arguments.dir)
        print("PASS")
    else:
        run(main, arguments)
