// Markdown pieces every bench report uses: padded tables and the goals section.

/** A markdown table with padded columns, so it reads as well in a terminal as rendered. */
export function markdownTable(headers, rows, alignRight = []) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const cell = (text, i) => (alignRight[i] ? text.padStart(widths[i]) : text.padEnd(widths[i]));
  const line = (cells) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (alignRight[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

export function goalsSection(goals) {
  const lines = goals.map((g) => `- **${g.met ? 'met' : 'NOT met'}**: ${g.text}`);
  const met = goals.filter((g) => g.met).length;
  return ['## Goals', '', ...lines, '', `${met} of ${goals.length} goals met.`].join('\n');
}

