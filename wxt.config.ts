// The browser extension is built with WXT from extension/ (see the extension issue).
// Kept minimal until then; shared/ is what the extension will verify seals with.
export default {
  srcDir: 'extension',
  outDir: '.output',
};
