/** Account and password → createSession; the token goes to sessionStorage (api.ts). */
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { errorText, logIn, loginNotice } from '../api.js';

export function LoginScreen() {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    setBusy(true);
    setError('');
    try {
      await logIn(String(form.get('username') ?? ''), String(form.get('password') ?? ''));
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main class="login">
      <form class="card login-form" onSubmit=${submit} aria-label="Log in">
        <h1>engine explorer</h1>
        ${loginNotice.value && html`<p class="notice" role="status">${loginNotice.value}</p>`}
        <label>Account <input name="username" autocomplete="username" required autofocus /></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" /></label>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        <button type="submit" disabled=${busy}>Log in</button>
      </form>
    </main>`;
}
