"""Runs the lc0 eval pipeline as the producer of a batch-file queue, and
reads the queue back with sluice.DatasetConsumer (in a real setup the two
run in different processes: the producer here, the trainer elsewhere).

    PYTHONPATH=build/bindings/python python3 \\
        bindings/python/examples/lc0_queue_producer.py /tmp/games /tmp/queue
"""

import sys
import time

import sluice


def main(games_dir, queue_root, batch_size=256):
    sluice.generate_games(games_dir, 20)
    config = sluice.lc0_pipeline(games_dir, batch_size=batch_size, mode="eval")
    tensors = config.stage[-1].name
    del config.output[:]  # the writer consumes the generator's output
    writer = config.stage.add(name="queue", input=[tensors])
    writer.batch_file_writer.root = queue_root
    writer.batch_file_writer.split = "train"
    writer.batch_file_writer.dataset_name = "lc0-example"
    writer.batch_file_writer.batch_size = batch_size
    writer.batch_file_writer.batches_per_file = 4
    writer.batch_file_writer.max_backlog_files = 2
    consumer = sluice.DatasetConsumer(queue_root, split="train", timeout=5)
    batches = 0
    with sluice.DataLoader(config):
        try:
            while True:
                planes = consumer.get_batch()["planes"]
                batches += 1
        except TimeoutError:
            pass
    print(f"consumed {batches} batches; last planes {planes.shape}; "
          f"stats {consumer.stats()}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
