"""Markdown injection through a shared link, in a real browser (issue 10): a model name that is a
markdown link or image is shown as text, never as an <a> or an <img>, and no traceback appears."""
import base64
import json
import zlib

import pytest

from tests.browser_util import browser, metric_text, require_chromium, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser
require_chromium()

LINK = "[login](https://example.invalid)"
IMAGE = "![x](https://example.invalid/x.png)"
CUSTOM = {"id": "custom", "name": LINK, "hidden_size": 2048, "num_layers": 8, "full_attention_layers": 8,
          "num_q_heads": 16, "num_kv_heads": 4, "head_dim": 128, "vocab_size": 1000, "params": 1e9,
          "active_params": 1e9, "source": IMAGE}


def _raw_link(d: dict) -> str:
    """A link as anyone can make one (JSON, zlib, base64url), not through the page."""
    return "v1." + base64.urlsafe_b64encode(zlib.compress(json.dumps(d).encode())).decode().rstrip("=")






@pytest.mark.parametrize("scenario, shown", [
    ({"model": LINK}, LINK),                              # refused: the warning repeats the value
    ({"model": IMAGE}, IMAGE),
    ({"model": "custom", "custom_model": CUSTOM}, None),   # valid: the name is never shown
], ids=["link", "image", "custom-model-name"])
def test_a_link_cannot_put_a_link_or_an_image_on_the_page(server, browser, scenario, shown):
    page = browser.new_page()
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if "example.invalid" in r.url else None)
    page.goto(f"{server}/?s={_raw_link(scenario)}")
    page.get_by_text("Offline: store, train ($)").wait_for(timeout=60_000)
    if shown is not None:
        page.get_by_text("could not be used").wait_for(timeout=30_000)
        # shown as typed (a zero-width space after ':' keeps markdown from making a bare URL a link)
        assert shown in page.inner_text("body").replace("\u200b", "")
        assert metric_text(page, "Samples") == "913,760"   # the defaults instead (913,786 in batches of 32)
    page.wait_for_timeout(300)
    assert page.locator('a[href*="example.invalid"]').count() == 0
    assert page.locator('img[src*="example.invalid"]').count() == 0
    assert fetched == []
    body = page.inner_text("body")
    assert "Traceback" not in body and page.locator('[data-testid="stException"]').count() == 0
    page.close()
