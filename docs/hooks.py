"""mkdocs hooks: the reference pages written from the code at build time.

- ``reference/cli.md``: ``voice-hitl --help`` and every sub-command's help, from the parser
  the command itself builds (``voice_hitl._cli.build_parser``).
- ``reference/http-api.md`` and ``reference/openapi.json``: the operator service's OpenAPI
  document (``voice_hitl.service.openapi_document``) as a page and as the file itself.
- ``reference/recording-format.md`` and ``reference/manifest.schema.json``: the recording
  manifest's JSON Schema (``voice_hitl/recording/manifest.schema.json``).

Nothing here fetches anything: the pages are made from this checkout's code.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # this checkout's code, whatever the environment installed
    sys.path.insert(0, str(ROOT))

HELP_COLUMNS = "100"
SCHEMA = ROOT / "voice_hitl" / "recording" / "manifest.schema.json"
METHODS = ("get", "post", "put", "patch", "delete")
# A Sphinx role that reached a page: docs/griffe_rest.py should have rewritten it.
LEFT_ROLE = re.compile(r":(?:class|meth|func|attr|mod|exc|data|obj|const):(?:`|<code>)")
log = logging.getLogger("mkdocs.hooks.voice_hitl")  # a warning fails the strict build


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated reference pages and files."""
    document = _openapi()
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    generated = {
        "reference/cli.md": cli_page(),
        "reference/http-api.md": http_page(document),
        "reference/openapi.json": json.dumps(document, indent=2) + "\n",
        "reference/recording-format.md": schema_page(schema),
        "reference/manifest.schema.json": SCHEMA.read_text(encoding="utf-8"),
    }
    for uri, content in generated.items():
        files.append(File.generated(config, uri, content=content))
    return files


def on_page_content(html: str, page: Page, **kwargs: Any) -> str:
    """Refuse (as a warning, fatal under --strict) a page where reST roles show as text."""
    left = LEFT_ROLE.findall(html)
    if left:
        log.warning(
            "%s shows %d reST roles as text (e.g. %r)", page.file.src_uri, len(left), left[0]
        )
    return html


# -- the command line ------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser, then each sub-command's parser, depth first, in the order they were added."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for sub in action.choices.values():
                if id(sub) not in seen:  # an alias maps to the same parser
                    seen.add(id(sub))
                    yield from _commands(sub)


def cli_page() -> str:
    """Every ``voice-hitl`` command's ``--help``, as the command prints it."""
    from voice_hitl._cli import build_parser

    os.environ["COLUMNS"] = HELP_COLUMNS  # argparse wraps to the terminal's width
    lines = [
        "# Command line",
        "",
        "The `voice-hitl` command (installed with the package; the operator commands need the",
        "`server` extra). This page is written at build time from the command's own parser, so",
        "it is the `--help` of the code it documents. Every failure a user can cause is one",
        "line on stderr naming the bad input, exit 2 for a usage error; the commands below",
        "name their other exit codes.",
        "",
    ]
    for parser in _commands(build_parser()):
        lines += [f"## `{parser.prog}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


# -- the HTTP API ----------------------------------------------------------------------------


def _openapi() -> dict[str, Any]:
    from voice_hitl.service import openapi_document

    return openapi_document()


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _ref_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref", "")
    return ref.rsplit("/", 1)[-1] if ref else ""


def _schema_text(schema: dict[str, Any]) -> str:
    """A schema in words: a link for a named schema, the type for a plain one, the fields of
    an object, the items of an array; JSON for anything else."""
    name = _ref_name(schema)
    if name:
        return f"[`{name}`](#schema-{name.lower()})"
    kind = schema.get("type")
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_schema_text(schema['items'])}"
    if kind == "object" and schema.get("properties"):
        required = set(schema.get("required", []))
        fields = [
            f"`{field}`{'' if field in required else '?'}: {_schema_text(inner)}"
            for field, inner in schema["properties"].items()
        ]
        return "object with " + ", ".join(fields)
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_schema_text(schema['additionalProperties'])}"
    plain = {"description", "format", "nullable", "minLength", "maxLength", "minimum", "pattern"}
    if isinstance(kind, str) and set(schema) - {"type"} <= plain:
        return f"`{kind}`"
    return f"`{_cell(json.dumps(schema))}`"


def _body_lines(schema: dict[str, Any]) -> list[str]:
    """A request body: a table of its fields, or the schema as JSON when it is not an object."""
    if schema.get("type") != "object" or not schema.get("properties"):
        return ["```json", json.dumps(schema, indent=2), "```"]
    required = set(schema.get("required", []))
    lines = ["| field | schema | required | description |", "|---|---|---|---|"]
    for field, inner in schema["properties"].items():
        shown = {k: v for k, v in inner.items() if k != "description"}
        lines.append(
            f"| `{field}` | {_schema_text(shown) if shown else 'any'} | "
            f"{'yes' if field in required else 'no'} | {_cell(inner.get('description', ''))} |"
        )
    return lines


def http_page(document: dict[str, Any]) -> str:
    """The OpenAPI document as a page: each route, its parameters, body and answers."""
    info = document.get("info", {})
    lines = [
        "# HTTP API",
        "",
        f"The operator service's API ({_cell(info.get('title', ''))}, version "
        f"{_cell(info.get('version', ''))}), written at build time from the OpenAPI document",
        "the service serves at `/v1/openapi.json` "
        "([download this build's copy](openapi.json)). Every route needs",
        "`Authorization: Bearer <token>` unless it says otherwise; see",
        "[The operator service](../guides/operator-service.md).",
        "",
    ]
    for path, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            lines += [f"## `{method.upper()} {path}`", ""]
            if operation.get("summary"):
                lines += [_cell(operation["summary"]), ""]
            if operation.get("security", document.get("security")) == []:
                lines += ["No token needed.", ""]
            if operation.get("description"):
                lines += [operation["description"].strip(), ""]
            parameters = operation.get("parameters", [])
            if parameters:
                lines += [
                    "| parameter | in | required | schema | description |",
                    "|---|---|---|---|---|",
                ]
                for parameter in parameters:
                    lines.append(
                        f"| `{parameter['name']}` | {parameter['in']} | "
                        f"{'yes' if parameter.get('required') else 'no'} | "
                        f"{_schema_text(parameter.get('schema', {}))} | "
                        f"{_cell(parameter.get('description', ''))} |"
                    )
                lines.append("")
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                lines += ["Body (JSON):", "", *_body_lines(body["schema"]), ""]
            lines += ["| status | meaning | body |", "|---|---|---|"]
            for status, response in operation.get("responses", {}).items():
                content = response.get("content", {})
                shown = ""
                for kind, media in content.items():
                    shown = _schema_text(media.get("schema", {})) if "json" in kind else f"`{kind}`"
                lines.append(f"| {status} | {_cell(response.get('description', ''))} | {shown} |")
            lines.append("")
    schemas = document.get("components", {}).get("schemas", {})
    if schemas:
        lines += ["## Schemas", ""]
        for name, schema in schemas.items():
            lines += [
                f"### `{name}` {{#schema-{name.lower()}}}",
                "",
                "```json",
                json.dumps(schema, indent=2),
                "```",
                "",
            ]
    return "\n".join(lines)


# -- the recording format --------------------------------------------------------------------


def _type_of(schema: dict[str, Any]) -> str:
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type", "")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    return ", ".join(f"`{k}`" for k in kinds) or "see schema"


def schema_page(schema: dict[str, Any]) -> str:
    """The manifest schema: its top-level fields as a table, then the schema itself."""
    required = set(schema.get("required", []))
    lines = [
        "# Recording format",
        "",
        "A recorded call is a folder: `manifest.json`, `wire.jsonl` (the provider's frames both",
        "ways), `caller.flac` (the caller's audio) and `stories.json` (every human-input",
        "request's story); see [Recording and replaying calls](../guides/recording.md).",
        f"`manifest.json` follows this JSON Schema: **{_cell(schema.get('title', ''))}**",
        "(`voice_hitl/recording/manifest.schema.json`, shipped in the package as",
        "`voice_hitl.recording.MANIFEST_SCHEMA`; [download](manifest.schema.json)).",
        "",
        "| field | type | required | description |",
        "|---|---|---|---|",
    ]
    for name, field in schema.get("properties", {}).items():
        lines.append(
            f"| `{name}` | {_type_of(field)} | {'yes' if name in required else 'no'} | "
            f"{_cell(field.get('description', ''))} |"
        )
    lines += ["", "## The schema", "", "```json", json.dumps(schema, indent=2), "```", ""]
    return "\n".join(lines)
