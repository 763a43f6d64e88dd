package tui

import "strings"

// helpLines is the help overlay for the current view, generated from its
// key table (viewKeys), so every key it answers is listed.
func (m Model) helpLines() []string {
	bs := viewKeys(m.screen)
	w := 0
	for _, b := range bs {
		w = max(w, width(b.helpKeys()))
	}
	lines := []string{"  Keys"}
	for _, b := range bs {
		text := wrapWords(b.help, max(m.width-w-5, 20))
		lines = append(lines, "  "+m.st.render(m.st.header, fitClean(b.helpKeys(), w))+"  "+text[0])
		for _, t := range text[1:] {
			lines = append(lines, strings.Repeat(" ", w+4)+t)
		}
	}
	if note := "  What you may see is decided by the data source, not by this screen."; len(lines)+2 <= m.bodyHeight() {
		lines = append(lines, "", note)
	}
	return lines
}
