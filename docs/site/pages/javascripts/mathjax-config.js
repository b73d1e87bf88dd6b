// MathJax 3, served from site/assets/mathjax (npm's mathjax package, docs/site/package.json).
// Lessons: pymdownx.arithmatex (generic) wraps each formula in .arithmatex as \( \) or \[ \].
// Notebooks: nbconvert leaves the markdown cells' $...$ and $$...$$ as text in .jp-RenderedMarkdown.
// Only those two places are typeset; code, outputs and everything else are left alone.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex|jp-RenderedMarkdown",
  },
};
