"""An optional judge: any OpenAI-compatible chat-completions endpoint the user configures.

The request is pinned and recorded: model, temperature (0), seed, and a versioned prompt
template whose SHA-256 goes into every result. The judge must answer with a JSON object
``{"score": <number in [0, 1]>, "reason": "<one sentence>"}``; anything else is an error
for that item (never a silent default).

Configuration (``[text.judge]`` in the config)::

    base_url = "http://localhost:8000/v1"   # POST {base_url}/chat/completions
    model = "my-model"
    api_key_env = "SCIFLOW_JUDGE_API_KEY"    # the key is read from this variable, never stored

Only the standard library is used (``urllib``), so the client has no extra dependency.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from typing import Any

from sciflow.config import JudgeConfig

log = logging.getLogger(__name__)

TEMPLATE_VERSION = "1"

ALIGNMENT_TEMPLATE = """You grade whether a scientific framework diagram matches the prompt it was drawn from.
The diagram has been parsed into a directed graph. Judge only structure and content: are the
prompt's components present, and do the arrows connect them in the prompt's directions?

PROMPT:
{prompt}

PARSED DIAGRAM:
{graph}

Answer with only a JSON object: {{"score": <number between 0 and 1>, "reason": "<one sentence>"}}"""

VISUAL_FLOW_TEMPLATE = """You grade the visual flow of the attached scientific framework diagram: is there a
clear dominant reading direction, do arrows follow it (feedback loops excepted), are there few
crossings and overlaps, and are arrowheads readable?

Answer with only a JSON object: {{"score": <number between 0 and 1>, "reason": "<one sentence>"}}"""


class JudgeError(RuntimeError):
    """The judge endpoint failed or answered something that is not a valid score."""


def template_sha256(template: str) -> str:
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


class ChatJudge:
    """Client of an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(self, config: JudgeConfig):
        if not config.base_url or not config.model:
            raise JudgeError("the judge needs text.judge.base_url and text.judge.model in the config")
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"

    def describe(self, template: str = ALIGNMENT_TEMPLATE) -> dict[str, Any]:
        c = self.config
        return {
            "backend": "judge",
            "base_url": c.base_url,
            "model": c.model,
            "temperature": c.temperature,
            "seed": c.seed,
            "template_version": TEMPLATE_VERSION,
            "template_sha256": template_sha256(template),
            "fallback": False,
        }

    def chat(self, messages: list[dict[str, Any]]) -> str:
        """POST the messages; return the first choice's content. Retries timeouts and 5xx."""
        c = self.config
        body = json.dumps(
            {"model": c.model, "messages": messages, "temperature": c.temperature, "seed": c.seed}
        ).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(c.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        last: Exception | None = None
        for attempt in range(c.max_retries + 1):
            req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=c.timeout_s) as resp:
                    payload = json.loads(resp.read().decode("utf-8"))
                return str(payload["choices"][0]["message"]["content"])
            except urllib.error.HTTPError as exc:
                if exc.code < 500:
                    detail = exc.read().decode("utf-8", "replace")[:200]
                    raise JudgeError(f"judge endpoint {self.url} answered HTTP {exc.code}: {detail}") from exc
                last = exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = exc
            except (KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
                raise JudgeError(f"judge endpoint {self.url} returned no chat completion: {exc}") from exc
            if attempt < c.max_retries:
                time.sleep(min(2.0**attempt, 8.0))
        raise JudgeError(f"judge endpoint {self.url} unreachable after {c.max_retries + 1} tries: {last}")

    def score(self, template: str, image_png: bytes | None = None, **fields: str) -> tuple[float, str]:
        """Fill ``template``, ask the judge, and return ``(score, reason)``."""
        text = template.format(**fields)
        content: Any = text
        if image_png is not None:
            url = "data:image/png;base64," + base64.b64encode(image_png).decode("ascii")
            content = [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}]
        answer = self.chat([{"role": "user", "content": content}])
        return parse_score(answer)


def parse_score(answer: str) -> tuple[float, str]:
    """Read ``{"score": x, "reason": ...}`` from a judge's answer (the first JSON object in it).

    >>> parse_score('Sure. {"score": 0.75, "reason": "two arrows reversed"}')
    (0.75, 'two arrows reversed')
    """
    m = re.search(r"\{.*\}", answer, flags=re.DOTALL)
    if not m:
        raise JudgeError(f"judge answer holds no JSON object: {answer[:120]!r}")
    try:
        obj = json.loads(m.group(0))
        value = float(obj["score"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise JudgeError(f"judge answer is not {{'score': number}}: {answer[:120]!r}") from exc
    if not 0.0 <= value <= 1.0:
        raise JudgeError(f"judge score {value} is outside [0, 1]")
    return value, str(obj.get("reason", ""))
