"""The data side of a member: answering data interests, taking publications
in, and sending the data interests the ``Fetcher`` decides on.

A data interest is answered from the cache of recent publications, else
handed to the runtime (``DataWanted``, answered from its store) if this
member delivered the publication, else left unanswered, as in NDN (the
requester retries elsewhere). A publication nobody announced in a vector is
dropped, as NDN drops unsolicited data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping

from sync.core import BROADCAST, Outgoing

from . import packets
from .cache import PublicationCache
from .config import Config
from .events import DataWanted, Delivered
from .fetch import Fetcher
from .names import Name
from .vector import Producer


class Retrieval:
    def __init__(self, group: Name, config: Config, stats: Counter[str]) -> None:
        self.group = group
        self.stats = stats
        self.fetch = Fetcher(config)
        self.cache = PublicationCache(config.cache_size)

    def answer(self, interest: packets.DataInterest, source: Hashable | None) -> Outgoing | DataWanted | None:
        key = (interest.producer, interest.seq)
        to = BROADCAST if source is None else source
        if (content := self.cache.take(*key)) is not None:
            self.stats["data_answered"] += 1
            return Outgoing(packets.encode_publication(self.group, *key, content), to)
        if self.fetch.has(*key) and interest.seq <= self.fetch.delivered.get(interest.producer, 0):
            self.stats["data_wanted"] += 1
            return DataWanted(str(interest.producer.node), interest.producer.bootstrap, interest.seq, to)
        self.stats["data_not_here"] += 1
        return None

    def take(self, publication: packets.Publication, source: Hashable | None, me: Producer,
             latest: Mapping[Producer, int]) -> list[Delivered]:
        """A fetched publication: those now deliverable, in sequence order."""
        producer, seq = publication.producer, publication.seq
        if producer == me or self.fetch.has(producer, seq):
            self.stats["duplicate"] += 1
            return []
        if seq > latest.get(producer, 0):
            self.stats["unsolicited"] += 1  # not announced in any vector we heard: NDN drops it too
            return []
        self.stats["fetched"] += 1
        if source is not None:
            self.fetch.saw(source, producer, seq)
        return [self.delivered(producer, ready, content)
                for ready, content in self.fetch.arrive(producer, seq, publication.content)]

    def delivered(self, producer: Producer, seq: int, content: bytes) -> Delivered:
        self.cache.remember(producer, seq, content)
        return Delivered(str(producer.node), producer.bootstrap, seq, content)

    def requests(self, now: int, latest: Mapping[Producer, int], nonce: Callable[[], int]) -> list[Outgoing]:
        out = []
        for producer, seq, to in self.fetch.requests(now, latest):
            out.append(Outgoing(packets.encode_data_interest(self.group, producer, seq, nonce()), to))
            self.stats["data_interest_sent"] += 1
        return out

    # -------------------------------------------------------------- state

    def export(self, plain_address: Callable[[Hashable], object]) -> dict:
        return {"cache": self.cache.export(), "fetch": self.fetch.export(plain_address)}

    def restore(self, saved: dict, address: Callable[[object], Hashable]) -> None:
        """Back to what ``export`` gave (on a fresh part)."""
        self.cache.restore(saved["cache"])
        self.fetch.restore(saved["fetch"], address)
