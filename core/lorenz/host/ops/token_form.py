"""The landing page's token form, for a browser holding the bearer token: the token is kept in the
tab's ``sessionStorage`` and sent in an ``Authorization`` header (never in a URL) to fetch the page
as that token sees it, which then replaces the anonymous one. The script is served from
``/landing.js`` so the page's Content-Security-Policy allows no inline script."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["FORGET_BUTTON", "SCRIPT_PATH", "TOKEN_FORM", "landing_script"]

SCRIPT_PATH = "/landing.js"

# The input has no name: a form sent without the script carries no token (and form-action 'none'
# in the page's policy stops it being sent at all).
TOKEN_FORM = f"""<form id="token-form" autocomplete="off">
<label>Bearer token <input id="token-input" type="password" autocomplete="off" required></label>
<button type="submit">Show the inventory</button> <span id="token-status" class="muted"></span>
</form>
<p class="muted">The token stays in this tab's session storage and goes in an Authorization header,
never in the URL.</p>
<script src="{SCRIPT_PATH}"></script>"""

#: On the page a token sees, when a token is configured: drop the one this tab keeps.
FORGET_BUTTON = '<p><button id="token-forget" type="button">Forget the token</button></p>'

_SCRIPT = """(function () {
  "use strict";
  var KEY = "lorenz-token";
  function say(text) {
    var status = document.getElementById("token-status");
    if (status) { status.textContent = text; }
  }
  function load(token) {
    fetch(location.pathname + location.search, {
      headers: {"Authorization": "Bearer " + token, "Accept": "text/html"},
      cache: "no-store",
      credentials: "omit"
    }).then(function (response) {
      return response.text().then(function (html) { return {status: response.status, html: html}; });
    }).then(function (answer) {
      var page = new DOMParser().parseFromString(answer.html, "text/html");
      if (answer.status !== 200 || page.body.getAttribute("data-grant") !== "yes") {
        sessionStorage.removeItem(KEY);
        say("The server did not accept this token.");
        return;
      }
      document.body.replaceWith(document.adoptNode(page.body));
      var forget = document.getElementById("token-forget");
      if (forget) {
        forget.addEventListener("click", function () { sessionStorage.removeItem(KEY); location.reload(); });
      }
      var every = Number(new URLSearchParams(location.search).get("refresh"));
      if (every > 0) { setTimeout(function () { load(token); }, Math.min(every, 3600) * 1000); }
    }).catch(function () { say("The server could not be reached."); });
  }
  var form = document.getElementById("token-form");
  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var input = document.getElementById("token-input");
      var token = input.value.trim();
      input.value = "";
      if (token) { sessionStorage.setItem(KEY, token); load(token); }
    });
  }
  var kept = sessionStorage.getItem(KEY);
  if (kept) { load(kept); }
})();
"""


async def landing_script(request: Request) -> Response:
    return Response(
        _SCRIPT,
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )
