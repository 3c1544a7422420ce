"""Views of a session: what a person reads of a session's log, made from its
durable events (plain data) and nothing else: its title and its transcript
as Markdown (`views/markdown.py`), as log lines for LSP clients that do not
render events (`views/plain_transcript.py`), and the pieces of a line every
view and the CLI's terminal transcript share (`views/lines.py`). Above the
agent (whose event types it reads) and the store (the text of a stored
message, `store/message_text.py`); below the service and the faces, which
send what it makes."""
