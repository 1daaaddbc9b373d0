// Sign-in: the token is exchanged for an HttpOnly session cookie
// (POST /v1/ui/session) and kept nowhere in the page.
import { useEffect, useRef, useState } from "preact/hooks";
import { html, api, problemText } from "./lib.js";

export function SignIn({ signedIn }) {
  const input = useRef(null);
  const [err, setErr] = useState("");
  useEffect(() => { if (input.current) input.current.focus(); }, []);
  const submit = async (ev) => {
    ev.preventDefault();
    setErr("");
    try {
      await api("POST", "/v1/ui/session", { token: input.current.value.trim() });
      input.current.value = "";
      await signedIn();
    } catch (e) {
      setErr(e.status === 401 ? "That token is not valid." : problemText(e));
    }
  };
  return html`<form class="signin" onSubmit=${submit}>
    <h1>Sign in to AKK</h1>
    <p class="muted">Paste the operator token (from the daemon's state directory) or a host token. It is exchanged for a session cookie and not kept by this page.</p>
    <label for="token">Token</label>
    <input ref=${input} type="password" id="token" name="token" autocomplete="off" required />
    ${err && html`<p class="error" role="alert">${err}</p>`}
    <div class="actions"><button type="submit" class="primary">Sign in</button></div>
  </form>`;
}
