/** One ```ts block of a markdown file, with what the readme-snippets test needs to compile and name it. */
export interface ReadmeSnippet {
  /** The nearest heading above the block, without its `#`s. */
  heading: string;
  /** The block's first non-empty line, trimmed. */
  firstLine: string;
  /** 1-based line in the markdown file of the block's first code line (the one after the fence). */
  line: number;
  /** The compile context named by `<!-- snippet: <context> -->` on the line above the fence; `module` without one. */
  context: string;
  /** The code, without the list-item indentation the fence carries. */
  code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;
const CONTEXT_COMMENT = /^\s*<!--\s*snippet:\s*([\w-]+)\s*-->\s*$/;

/** Every ```ts (or ```typescript) block of `markdown`, in order. Blocks of other languages are skipped. */
export function extractSnippets(markdown: string): ReadmeSnippet[] {
  const lines = markdown.split(/\r?\n/);
  const snippets: ReadmeSnippet[] = [];
  let heading = '(top)';
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) {
      const h = HEADING.exec(lines[i]!);
      if (h) heading = h[1]!;
      continue;
    }
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    // A fence closes on a line of at least as many of the same character (CommonMark), at any indentation.
    while (j < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[j]!)) body.push(lines[j++]!);
    if (lang === 'ts' || lang === 'typescript') {
      const code = body.map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart())).join('\n');
      snippets.push({
        heading,
        firstLine: code.split('\n').find((l) => l.trim() !== '')?.trim() ?? '',
        line: i + 2,
        context: CONTEXT_COMMENT.exec(previousNonBlank(lines, i))?.[1] ?? 'module',
        code,
      });
    }
    i = j;
  }
  return snippets;
}

function previousNonBlank(lines: string[], index: number): string {
  for (let k = index - 1; k >= 0; k--) if (lines[k]!.trim() !== '') return lines[k]!;
  return '';
}
