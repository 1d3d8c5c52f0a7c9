"""Explicit schemas: what an export holds, and what a check reports."""

from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

EXPORT = StructType([
    StructField("peer_id", StringType()),
    StructField("channel_id", StringType()),
    StructField("pos", LongType()),
    StructField("message_id", StringType()),
    StructField("sender_id", StringType()),
    StructField("lamport_timestamp", LongType()),
    StructField("causal_history", ArrayType(StringType())),
    StructField("content", StringType()),
    StructField("received_at_ms", LongType()),
    StructField("delivered_at_ms", LongType()),
    StructField("seq", LongType()),  # the author's sequence number (exports from before it: null)
    StructField("nick", StringType()),  # the author's nick, to name peers in the report (older exports: null)
    StructField("kind", StringType()),  # text, me, topic, reply, react, edit, delete, file (older exports: null)
    StructField("about", StringType()),  # a reply, reaction, edit or deletion: the message it names
])
REQUIRED = ("peer_id", "channel_id", "pos", "message_id", "sender_id", "lamport_timestamp")

ANOMALY = StructType([
    StructField("kind", StringType(), False),
    StructField("channel_id", StringType()),
    StructField("peer_id", StringType()),
    StructField("message_id", StringType()),
    StructField("other_message_id", StringType()),
    StructField("other_peer_id", StringType()),
    StructField("explanation", StringType()),
])
ANOMALY_COLUMNS = [f.name for f in ANOMALY.fields]
