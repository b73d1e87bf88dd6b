// MathJax 3, served from site/assets/mathjax (npm's mathjax package, docs/site/package.json).
// Lessons: pymdownx.arithmatex (generic) wraps each formula in .arithmatex as \( \) or \[ \].
// Notebooks: nbconvert leaves the markdown cells' $...$ and $$...$$ as text in .jp-RenderedMarkdown.
// Only those elements are typeset; code (skipped inside them too), outputs and the rest of
// the page are left alone, so a lone dollar sign in prose stays a dollar sign.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  startup: {
    elements: [".arithmatex", ".jp-RenderedMarkdown"],
  },
};
