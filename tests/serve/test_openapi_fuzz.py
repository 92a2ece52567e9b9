"""schemathesis against the live service: requests generated from the OpenAPI document, valid
and invalid, none of which may get a server error or a response its document does not
describe (status, content type, headers, schema), and every undocumented method a 405 with
`Allow`.

Bounded for CI: 30 examples per operation and a time budget for the whole run, with a fixed
seed; every operation but the event stream must have been tried within it. The event stream is left out (it never ends). A schema-valid request may still be
refused where validity depends on what the kernel holds (a live channel, a valid key, a
well-formed package, a knowledge name's rules, 'q' or 'keywords'): those operations are not
held to accepting every valid-looking request, every other one is.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.serve.harness import Service

STATE_DEPENDENT = [
    "post_input",
    "post_input_sync",
    "post_interrupt",
    "put_settings",
    "install_plugin",
    "enable_plugin",
    "disable_plugin",
    "reload_plugin",
    "put_llm_source",
    "get_recall",
    "get_knowledge",
    "get_knowledge_search",
    "get_knowledge_entry",
]
CONFIG = f"""
[checks]
enabled = true

[[operations]]
include-operation-id = {STATE_DEPENDENT!r}
checks.positive_data_acceptance.enabled = false

# A sync request whose timeout runs out gets the documented 504 (the input is still queued).
[[operations]]
include-operation-id = "post_input_sync"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "504"]
"""
TIME_BUDGET_S = 60
SEED = 20240615


def test_generated_requests_get_no_server_error_and_answers_their_document_describes(
    service: Service, tmp_path: Path
) -> None:
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG, encoding="utf-8")
    run = subprocess.run(
        [
            str(Path(sys.executable).with_name("schemathesis")),
            "--config-file",
            str(config),
            "--no-color",
            "run",
            f"{service.api}/openapi.json",
            "--max-examples",
            "30",
            "--max-time",
            str(TIME_BUDGET_S),
            "--exclude-path",
            "/events",
            "--seed",
            str(SEED),
            "--request-timeout",
            "30",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=TIME_BUDGET_S + 120,
    )
    assert run.returncode == 0, run.stdout[-12000:] + run.stderr[-2000:]
    assert "No issues found" in run.stdout or " passed" in run.stdout, run.stdout[-4000:]
    # The time budget must not have ended the run before every operation was tried.
    selected = re.search(r"Selected: (\d+)/(\d+)", run.stdout)
    tested = re.search(r"Tested: (\d+)", run.stdout)
    assert selected is not None and tested is not None, run.stdout[-4000:]
    assert int(tested.group(1)) == int(selected.group(1)) == int(selected.group(2)) - 1
