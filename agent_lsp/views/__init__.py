"""Views of a session: what a person reads of a session's log, made from its
durable events (plain data) and nothing else: its title and its transcript
as Markdown (`views/markdown.py`). Above the agent (whose event types it
reads) and the store (the text of a stored message, `store/message_text.py`);
below the service and the faces, which send what it makes."""
