// The page's one way to the service: /api/v1 calls with the bearer token, and the event
// stream, read with fetch so it can carry the token too.
export const API = "/api/v1";
export const $ = (id) => document.getElementById(id);

export function token() { return sessionStorage.getItem("hologram-token") || ""; }

export async function call(method, path, body) {
  const headers = {};
  if (token()) headers.authorization = `Bearer ${token()}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(API + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) $("token-box").hidden = false;
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

// Sends a file as the raw body (a .hmap package: POST /plugins takes the archive itself).
export async function upload(path, file, type = "application/zip") {
  const headers = { "content-type": type };
  if (token()) headers.authorization = `Bearer ${token()}`;
  const response = await fetch(API + path, { method: "POST", headers, body: file });
  if (response.status === 401) $("token-box").hidden = false;
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

// Sends a form (an input with images: text fields and file parts); the browser writes the
// multipart boundary into the content type itself.
export async function postForm(path, form) {
  const headers = {};
  if (token()) headers.authorization = `Bearer ${token()}`;
  const response = await fetch(API + path, { method: "POST", headers, body: form });
  if (response.status === 401) $("token-box").hidden = false;
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

export function line(list, text, cls) {
  const item = document.createElement("li");
  item.textContent = text;
  if (cls) item.className = cls;
  list.appendChild(item);
  list.scrollTop = list.scrollHeight;
  return item;
}

// Reads /events for ever (reconnecting after a second), handing each event to `onEvent`
// as (type, document). `from`: the seq to resume after (0: every event the ring holds).
export async function stream(onEvent, from = null) {
  let last = from;
  for (;;) {
    try {
      const headers = {};
      if (token()) headers.authorization = `Bearer ${token()}`;
      if (last !== null) headers["last-event-id"] = String(last);
      const response = await fetch(API + "/events", { headers });
      if (!response.ok) throw new Error(`events: ${response.status}`);
      $("link").textContent = "live"; $("link").className = "up";
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          const fields = {};
          for (const row of frame.split("\n")) {
            if (row.startsWith(":")) continue;
            const at = row.indexOf(": ");
            if (at > 0) fields[row.slice(0, at)] = row.slice(at + 2);
          }
          if (!fields.event || !fields.data) continue;
          const document = JSON.parse(fields.data);
          if (document.seq !== undefined) last = document.seq;
          onEvent(fields.event, document);
        }
      }
    } catch (err) {
      console.warn("event stream:", err.message);
    }
    $("link").textContent = "reconnecting…"; $("link").className = "down";
    await new Promise((r) => setTimeout(r, 1000));
  }
}
