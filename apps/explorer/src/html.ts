/** htm bound to preact: tagged templates instead of JSX, so the project's own tsc emits the app. */
export { html } from 'htm/preact';
