from __future__ import annotations

import pytest

from llm_fake_server import FakeServer


@pytest.fixture
async def server():
    fake = FakeServer()
    await fake.start()
    yield fake
    await fake.stop()
