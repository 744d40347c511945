// chatledger pages: the bearer token (kept in sessionStorage), errors, and approve/deny.
// Content is rendered by the server (autoescaped); this script never builds HTML from data.
(function () {
  "use strict";
  var KEY = "chatledger.token";

  function token() { return sessionStorage.getItem(KEY) || ""; }
  function notice(text) {
    var el = document.getElementById("notice");
    if (el) { el.textContent = text; }
  }
  function showTokenForm() {
    var form = document.getElementById("token-form");
    form.hidden = false;
    document.getElementById("token").focus();
  }
  function authHeaders() {
    var t = token();
    return t ? { "Authorization": "Bearer " + t } : {};
  }
  function errorText(xhrOrBody, status) {
    try {
      var body = typeof xhrOrBody === "string" ? JSON.parse(xhrOrBody) : xhrOrBody;
      if (body && body.error && body.error.message) {
        return (status === 404 ? "Not found: " : "Error: ") + body.error.message;
      }
    } catch (e) { /* not JSON */ }
    return "Error " + status;
  }

  document.addEventListener("htmx:configRequest", function (event) {
    var t = token();
    if (t) { event.detail.headers["Authorization"] = "Bearer " + t; }
  });

  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    if (xhr.status === 401) {
      sessionStorage.removeItem(KEY);
      notice("A valid access token is needed.");
      showTokenForm();
      return;
    }
    var message = errorText(xhr.responseText, xhr.status);
    var target = event.detail.target;
    if (target && target.classList.contains("fragment")) {
      var p = document.createElement("p");
      p.className = "error";
      p.setAttribute("role", "alert");
      p.textContent = message;
      target.replaceChildren(p);
    } else {
      notice(message);
    }
  });

  document.addEventListener("htmx:sendError", function () {
    notice("The server cannot be reached.");
  });

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("token-form");
    var signOut = document.getElementById("sign-out");
    if (token()) { signOut.hidden = false; }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      sessionStorage.setItem(KEY, document.getElementById("token").value.trim());
      form.hidden = true;
      signOut.hidden = false;
      notice("");
      htmx.trigger(document.body, "chatledger:auth");
    });
    signOut.addEventListener("click", function () {
      sessionStorage.removeItem(KEY);
      signOut.hidden = true;
      location.reload();
    });
  });

  // Approve or deny from the inbox or a conversation: the JSON API, so the continuation starts.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList || !form.classList.contains("answer")) { return; }
    event.preventDefault();
    var button = event.submitter;
    var approved = button && button.value === "approve";
    var reason = form.elements.reason.value.trim();
    var chatId = form.dataset.chatId;
    var body = { toolCallId: form.dataset.toolCallId, approved: approved };
    if (reason) { body.reason = reason; }
    // "Don't ask again": approve with a standing grant (POST .../grants) instead.
    var grant = approved && form.elements.grant ? form.elements.grant.value : "";
    var route = "/approvals";
    if (grant) {
      route = "/grants";
      body = { toolCallId: body.toolCallId, scope: grant, reason: body.reason };
      var lasts = form.elements["grant-for"].value;
      if (lasts) { body.forSeconds = Number(lasts); }
    }
    var buttons = form.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    fetch("/api/chats/" + encodeURIComponent(chatId) + route, {
      method: "POST",
      headers: Object.assign({ "Content-Type": "application/json" }, authHeaders()),
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.text().then(function (text) {
        if (response.status === 401) { showTokenForm(); throw new Error("A valid access token is needed."); }
        if (!response.ok) { throw new Error(errorText(text, response.status)); }
        notice((approved ? "Approved " : "Denied ") + body.toolCallId + " in " + chatId +
               ". The model continues.");
        htmx.trigger(document.body, "chatledger:changed");
      });
    }).catch(function (error) {
      notice(error.message);
      buttons.forEach(function (b) { b.disabled = false; });
    });
  });

  // POST a small JSON action for a button, then redraw; a refusal is shown and the button freed.
  function postAction(url, body, button, done) {
    button.disabled = true;
    fetch(url, {
      method: "POST",
      headers: Object.assign({ "Content-Type": "application/json" }, authHeaders()),
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.text().then(function (text) {
        if (response.status === 401) { showTokenForm(); throw new Error("A valid access token is needed."); }
        if (!response.ok) { throw new Error(errorText(text, response.status)); }
        if (done) { done(); }
        htmx.trigger(document.body, "chatledger:changed");
      });
    }).catch(function (error) {
      notice(error.message);
      button.disabled = false;
    });
  }

  // < 2/3 >: switch a message's branch (an audited switch through the JSON API), then redraw.
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.branch-switch") : null;
    if (!button || button.disabled || !button.dataset.to) { return; }
    var chatId = button.closest("nav.branch-nav").dataset.chatId;
    postAction("/api/chats/" + encodeURIComponent(chatId) + "/branches", { to: button.dataset.to }, button);
  });

  // Revoke a standing grant from the approvals page.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList || !form.classList.contains("revoke-grant")) { return; }
    event.preventDefault();
    var grantId = form.dataset.grantId;
    postAction("/api/grants/" + encodeURIComponent(grantId) + "/revoke", {}, form.querySelector("button"), function () {
      notice("Revoked " + grantId + ": its calls ask again.");
    });
  });

  // Keep the slider's number in step while it moves (the fragment follows after a short pause).
  document.addEventListener("input", function (event) {
    if (event.target.id === "at-slider") {
      document.getElementById("at-value").textContent = event.target.value;
    }
  });
})();
