"""The judge client against a real local HTTP server speaking the OpenAI chat format."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from sciflow.config import JudgeConfig
from sciflow.models.judge import ALIGNMENT_TEMPLATE, ChatJudge, JudgeError, parse_score


class FakeEndpoint(BaseHTTPRequestHandler):
    answers: list[tuple[int, str]] = []
    received: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEndpoint.received.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        code, content = FakeEndpoint.answers.pop(0)
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}) if code == 200 \
            else json.dumps({"error": content})
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), FakeEndpoint)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    FakeEndpoint.answers, FakeEndpoint.received = [], []
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_judge_posts_pinned_request_and_parses_score(server, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sekrit")
    FakeEndpoint.answers = [(200, 'Here: {"score": 0.8, "reason": "one arrow reversed"}')]
    judge = ChatJudge(JudgeConfig(base_url=server, model="m1", api_key_env="MY_KEY", seed=7))
    assert judge.score(ALIGNMENT_TEMPLATE, prompt="P", graph="G") == (0.8, "one arrow reversed")
    req = FakeEndpoint.received[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["auth"] == "Bearer sekrit"
    assert req["body"]["model"] == "m1" and req["body"]["temperature"] == 0.0 and req["body"]["seed"] == 7
    assert "PROMPT:\nP" in req["body"]["messages"][0]["content"]
    d = judge.describe()
    assert d["template_version"] == "1" and len(d["template_sha256"]) == 64


def test_judge_retries_server_errors_then_succeeds(server):
    FakeEndpoint.answers = [(503, "busy"), (200, '{"score": 1}')]
    judge = ChatJudge(JudgeConfig(base_url=server, model="m", max_retries=1))
    assert judge.score(ALIGNMENT_TEMPLATE, prompt="P", graph="G")[0] == 1.0
    assert len(FakeEndpoint.received) == 2


def test_judge_client_errors_are_clear(server):
    FakeEndpoint.answers = [(401, "bad key")]
    judge = ChatJudge(JudgeConfig(base_url=server, model="m"))
    with pytest.raises(JudgeError, match="HTTP 401"):
        judge.score(ALIGNMENT_TEMPLATE, prompt="P", graph="G")
    FakeEndpoint.answers = [(200, "I think it is fine")]
    with pytest.raises(JudgeError, match="no JSON object"):
        judge.score(ALIGNMENT_TEMPLATE, prompt="P", graph="G")


def test_image_is_sent_as_data_url(server):
    FakeEndpoint.answers = [(200, '{"score": 0.5}')]
    judge = ChatJudge(JudgeConfig(base_url=server, model="m"))
    judge.score("rate {x}", image_png=b"\x89PNG fake", x="this")
    content = FakeEndpoint.received[0]["body"]["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "rate this"}
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_unreachable_and_misconfigured():
    with pytest.raises(JudgeError, match="base_url"):
        ChatJudge(JudgeConfig())
    judge = ChatJudge(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0, timeout_s=2))
    with pytest.raises(JudgeError, match="unreachable"):
        judge.chat([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("answer", ['{"score": 1.5}', '{"score": "high"}', '{"reason": "x"}'])
def test_invalid_scores_rejected(answer):
    with pytest.raises(JudgeError):
        parse_score(answer)
