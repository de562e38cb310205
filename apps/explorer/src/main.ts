/** Entry point: renders the app into #app. */
import { render } from 'preact';
import { html } from './html.js';
import { App } from './app.js';

const root = document.getElementById('app')!;
root.textContent = ''; // the "Loading…" shown until the modules arrive
render(html`<${App} />`, root);
