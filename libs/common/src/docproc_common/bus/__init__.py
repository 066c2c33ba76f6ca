"""The event bus: transactional outbox, Kafka transport, and the embedded (outbox-polling) transport."""
