"""An independent MCP client for `reach mcp`: the official Python SDK (mcp 2.3.0).

Runs one scenario against a server and prints, as one JSON object on stdout,
what the client saw: results as the SDK parsed them (dumped with the wire's
field names), protocol errors, elicitation requests, notifications. The Rust
test (host/tests/mcp_clients.rs) asserts on it and on the files on disk; this
script only fails by itself when the client cannot talk to the server at all.

    python client.py SCENARIO --mode auto|legacy --url http://127.0.0.1:PORT/mcp [--header 'Name: value']
    python client.py SCENARIO --mode auto|legacy --stdio -- reach mcp

Over HTTP the bearer token is sent as `reach mcp` asks: from an explicit
`--header 'Authorization: …'`, else $REACH_MCP_TOKEN, else the file the server
keeps it in (.reach/mcp-token in the working folder, which is the server's).

--mode auto is what the SDK does by default (probe `server/discover` at
2026-07-28, fall back to `initialize`); --mode legacy is the `initialize`
handshake at 2025-11-25, which most desktop clients speak.

Scenarios: skills (the Skills extension, raw requests), tools, elicit, no-elicit, prompts, list-changed (the last with
--copy SRC DEST: copies a skill into the skills folder once it listens).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

# How long to wait for `notifications/tools/list_changed` after the copy.
LIST_CHANGED_WAIT_S = 20


def dump(model: Any) -> Any:
    """A result as it was on the wire (camelCase names), without unset fields."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def attempt(coro: Any) -> dict[str, Any]:
    """`{"result": …}`, or `{"protocol_error": {code, message}}` when the server answered with an error."""
    try:
        return {"result": dump(await coro)}
    except MCPError as e:
        return {"protocol_error": {"code": e.code, "message": e.message}}


class Elicitations:
    """A person at the client: answers each elicitation with `action`, and remembers what was asked."""

    def __init__(self) -> None:
        self.action = "accept"
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.seen.append(dump(params))
        return types.ElicitResult(action=self.action, content={} if self.action == "accept" else None)


# Where `reach mcp --http` keeps the token it made (relative to its working folder).
TOKEN_FILE = os.path.join(".reach", "mcp-token")


def token() -> str | None:
    """The server's bearer token: $REACH_MCP_TOKEN, else the server's token file."""
    if os.environ.get("REACH_MCP_TOKEN"):
        return os.environ["REACH_MCP_TOKEN"]
    try:
        with open(TOKEN_FILE, encoding="ascii") as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def connect(args: argparse.Namespace, **options: Any) -> Client:
    if args.url:
        given = dict(h.split(":", 1) for h in args.header)
        headers = {k.strip(): v.strip() for k, v in given.items()}
        if not any(k.lower() == "authorization" for k in headers) and (secret := token()):
            headers["Authorization"] = f"Bearer {secret}"
        http = create_mcp_http_client(headers=headers)
        server: Any = streamable_http_client(args.url, http_client=http)
    else:
        command, *rest = args.command
        # The SDK passes only a few safe variables by default; the server needs REACH_CACHE_DIR and the like.
        server = StdioServerParameters(command=command, args=rest, env=dict(os.environ), cwd=os.getcwd())
    return Client(server, mode=args.mode, read_timeout_seconds=60, **options)


async def tools(args: argparse.Namespace) -> dict[str, Any]:
    async with connect(args) as client:
        out: dict[str, Any] = {"protocol_version": client.protocol_version}
        out["capabilities"] = dump(client.server_capabilities)
        out["list"] = dump(await client.list_tools())
        out["read"] = await attempt(client.call_tool("files__read", {"path": "docs/a.txt"}))
        out["echo"] = await attempt(client.call_tool("echo__echo", {"greeting": "hello", "n": 3}))
        out["invalid_args"] = await attempt(client.call_tool("files__read", {"path": 1}))
        out["outside_grants"] = await attempt(client.call_tool("files__read", {"path": "/etc/passwd"}))
        out["unknown_tool"] = await attempt(client.call_tool("files__nope", {}))
        return out


async def elicit(args: argparse.Namespace) -> dict[str, Any]:
    person = Elicitations()
    async with connect(args, elicitation_callback=person) as client:
        out: dict[str, Any] = {"protocol_version": client.protocol_version, "calls": {}}
        await client.list_tools()
        for action in ("accept", "decline", "cancel"):
            person.action = action
            before = len(person.seen)
            call = await attempt(client.call_tool("files__write", {"path": f"notes/{action}.md", "content": f"{action}ed"}))
            call["elicitations"] = person.seen[before:]
            out["calls"][action] = call
        return out


async def no_elicit(args: argparse.Namespace) -> dict[str, Any]:
    async with connect(args) as client:
        out: dict[str, Any] = {"protocol_version": client.protocol_version}
        await client.list_tools()
        out["write"] = await attempt(client.call_tool("files__write", {"path": "notes/unasked.md", "content": "x"}))
        return out


async def prompts(args: argparse.Namespace) -> dict[str, Any]:
    async with connect(args) as client:
        out: dict[str, Any] = {"protocol_version": client.protocol_version}
        out["capabilities"] = dump(client.server_capabilities)
        out["prompts"] = await attempt(client.list_prompts())
        out["prompt"] = await attempt(client.get_prompt("files"))
        out["resources"] = await attempt(client.list_resources())
        out["resource"] = await attempt(client.read_resource("reach://skills/files/instructions"))
        out["missing_prompt"] = await attempt(client.get_prompt("nope"))
        return out


async def list_changed(args: argparse.Namespace) -> dict[str, Any]:
    source, dest = args.copy
    seen: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        # Handshake-era servers push the notification; recorded whatever it is.
        if isinstance(message, Exception):
            seen.append(f"exception: {message!r}")
            return
        seen.append(message.method)
        if isinstance(message, types.ToolListChangedNotification):
            arrived.set()

    async with connect(args, message_handler=on_message) as client:
        out: dict[str, Any] = {"protocol_version": client.protocol_version}
        out["before"] = [t.name for t in (await client.list_tools()).tools]
        if client.protocol_version == "2026-07-28":
            # At 2026-07-28 change notifications come only on a `subscriptions/listen` stream.
            async with client.listen(tools_list_changed=True) as subscription:
                out["honored"] = dump(subscription.honored) if subscription.honored else None
                shutil.copyfile(source, dest)
                with anyio.move_on_after(LIST_CHANGED_WAIT_S):
                    async for event in subscription:
                        seen.append(type(event).__name__)
                        arrived.set()
                        break
        else:
            shutil.copyfile(source, dest)
            with anyio.move_on_after(LIST_CHANGED_WAIT_S):
                await arrived.wait()
        out["notified"] = arrived.is_set()
        out["seen"] = seen
        out["after"] = [t.name for t in (await client.list_tools()).tools]
        return out


async def raw(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A request the SDK has no method for (an extension's), sent through its session as is."""
    request = types.Request[dict[str, Any], str](method=method, params=params)
    try:
        return {"result": await client.session.send_request(request, TypeAdapter(dict[str, Any]))}
    except MCPError as e:
        return {"protocol_error": {"code": e.code, "message": e.message}}


async def skills(args: argparse.Namespace) -> dict[str, Any]:
    """The Skills extension (io.modelcontextprotocol/skills) as a client that loads skills uses it:
    list, get, then read every file of the first skill and check it against the entry's digest and size."""
    async with connect(args) as client:
        out: dict[str, Any] = {"protocol_version": client.protocol_version}
        out["capabilities"] = dump(client.server_capabilities)
        out["tools"] = [t.name for t in (await client.list_tools()).tools]
        listed = await raw(client, "skills/list", {})
        out["list"] = listed
        entries = listed.get("result", {}).get("skills", [])
        out["verified"] = {}
        if entries:
            first = entries[0]
            out["get"] = await raw(client, "skills/get", {"uri": first["uri"]})
            for resource in first["resources"]:
                read = dump(await client.read_resource(resource["uri"]))
                content = read["contents"][0]
                data = content["text"].encode() if "text" in content else base64.b64decode(content["blob"])
                ok = f"sha256:{hashlib.sha256(data).hexdigest()}" == resource["digest"] and len(data) == resource["size"]
                out["verified"][resource["uri"]] = ok
        out["script"] = await attempt(
            client.call_tool("code-review__run_script", {"script": "scripts/count.py", "args": ["a", "b"]})
        )
        out["get_unknown"] = await raw(client, "skills/get", {"uri": "skill://nope/SKILL.md"})
        out["resources"] = await attempt(client.list_resources())
        out["read_unserved"] = await attempt(client.read_resource("skill://unserved/SKILL.md"))
        out["read_unlisted"] = await attempt(client.read_resource("skill://code-review/../../reach.toml"))
        return out


SCENARIOS = {"skills": skills, "tools": tools, "elicit": elicit, "no-elicit": no_elicit, "prompts": prompts, "list-changed": list_changed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    parser.add_argument("--url")
    parser.add_argument("--header", action="append", default=[], help="'Name: value', for --url")
    parser.add_argument("--copy", nargs=2, metavar=("SRC", "DEST"))
    # `--stdio -- COMMAND…` ends the options: split by hand, as argparse would read the server's own options.
    argv, command = sys.argv[1:], []
    if "--stdio" in argv:
        at = argv.index("--stdio")
        argv, command = argv[:at], argv[at + 1 :]
        command = command[1:] if command[:1] == ["--"] else command
    args = parser.parse_args(argv)
    args.command = command
    if bool(args.url) == bool(args.command):
        parser.error("give exactly one of --url and --stdio -- COMMAND")
    if args.scenario == "list-changed" and not args.copy:
        parser.error("list-changed needs --copy SRC DEST")
    out = anyio.run(SCENARIOS[args.scenario], args)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
