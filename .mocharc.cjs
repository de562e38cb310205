// mocha's settings. Files named on the command line run alone (`npx mocha dist/test/mqtt/02-subscribe.test.js`):
// mocha would add a configured spec to them, so the whole suite is the spec only when none is named.
const named = process.argv.slice(2).some((arg) => !arg.startsWith('-') && arg.endsWith('.js'));
module.exports = {
  spec: named ? [] : ['dist/test/**/*.test.js'],
  timeout: 20000,
  exit: true,
  'enable-source-maps': true,
};
