// Runs before the first paint (a blocking script in index.html's <head>), so
// a dark theme never flashes light: it shows the theme remembered on this
// machine, or the system's. src/ui/theme.ts takes over once the app starts;
// both must agree (src/ui/theme.test.ts runs this file).
(function () {
  var choice = null;
  try {
    choice = localStorage.getItem('ducklm.theme');
  } catch (e) {
    choice = null;
  }
  var dark = choice === 'dark';
  if (choice !== 'light' && choice !== 'dark') {
    try {
      dark = matchMedia('(prefers-color-scheme: dark)').matches;
    } catch (e) {
      dark = false;
    }
  }
  var root = document.documentElement;
  root.setAttribute('data-theme', dark ? 'dark' : 'light');
  root.style.colorScheme = dark ? 'dark' : 'light';
})();
