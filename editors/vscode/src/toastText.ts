// Text for VS Code's notifications, which show Markdown's backticks as they
// are: `code` in a server's message reads as 'code' there.

export function toastText(text: string): string {
  return text.replace(/`+([^`\n]+?)`+/g, "'$1'");
}
