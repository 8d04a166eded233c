// howtobench rate: save each rating the moment it changes. Text from the server is only ever set with
// textContent (never innerHTML), and every change carries the page's CSRF token.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const PASSING = 3;

  function collect(form) {
    const data = new FormData(form);
    const body = { score: data.get("score"), error_types: data.getAll("error_types"), comment: data.get("comment") || "" };
    const dims = {};
    for (const [key, value] of data.entries()) {
      if (key.startsWith("dim-")) dims[key.slice(4)] = value;
    }
    if (form.querySelector(".leaf")) body.dims = dims;
    if (!form.querySelector(".errors")) delete body.error_types;
    return body;
  }

  function showProgress(p) {
    const el = document.getElementById("progress");
    if (!el || !p) return;
    el.textContent = `${p.responses_rated} of ${p.responses_total} responses rated · ${p.finished} of ` +
      `${p.instructions} instructions finished · ${p.skipped} skipped · study: ${p.writings_covered} of ` +
      `${p.writings_total} writings fully rated`;
  }

  function setStatus(form, text, kind) {
    const el = form.querySelector(".status");
    el.textContent = text;
    el.classList.remove("ok", "bad", "busy");
    if (kind) el.classList.add(kind);
  }

  // A score of 3 or more has no penalty item: the error types are cleared and locked.
  function syncErrors(form) {
    const checked = form.querySelector('input[name="score"]:checked');
    const locked = checked !== null && Number(checked.value) >= PASSING;
    for (const box of form.querySelectorAll('input[name="error_types"]')) {
      if (locked) box.checked = false;
      box.disabled = locked;
    }
  }

  // One save in flight per response, so the server applies changes in the order the rater made them;
  // changes made meanwhile are sent together once it returns.
  async function save(form) {
    if (form.dataset.busy === "1") { form.dataset.dirty = "1"; return; }
    form.dataset.busy = "1";
    do {
      form.dataset.dirty = "0";
      await send(form);
    } while (form.dataset.dirty === "1");
    form.dataset.busy = "0";
  }

  async function send(form) {
    setStatus(form, "saving…", "busy");
    let response;
    try {
      response = await fetch(form.dataset.url, {
        method: "PUT",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify(collect(form)),
      });
    } catch (err) {
      setStatus(form, "not saved: the server cannot be reached (your choice is still on the page; change it again to retry)", "bad");
      return;
    }
    let payload = {};
    try { payload = await response.json(); } catch (err) { payload = {}; }
    if (!response.ok) {
      setStatus(form, "not saved: " + (payload.error || response.statusText), "bad");
      return;
    }
    setStatus(form, payload.rating.complete ? "saved" : "saved, not complete yet", payload.rating.complete ? "ok" : null);
    showProgress(payload.progress);
  }

  for (const form of document.querySelectorAll("form.rating")) {
    syncErrors(form);
    form.addEventListener("submit", (event) => event.preventDefault());
    form.addEventListener("change", () => { syncErrors(form); save(form); });
    let timer = null;
    form.querySelector("textarea").addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => save(form), 800);
    });
  }
})();
