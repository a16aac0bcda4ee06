// RunMapWorker: the loop of one worker of a stage that turns each input
// item into zero or more output items (decode, unpack, transform), in
// input order when the stage has an OrderedOutput (deterministic mode).
//
//   asio::awaitable<void> Unpacker::Work() {
//     std::string scratch;  // per worker, outlives the loop below
//     co_await RunMapWorker(input_, output_, ordered_, load_meter(),
//                           [&](Chunk& chunk, std::vector<Frame>& frames) {
//                             Unpack(chunk, scratch, frames);
//                           });
//   }
//
// Promises:
// - `transform(item, results)` is called once per input item, on the
//   worker's coroutine, with `results` empty; what it appends is sent.
// - Without `ordered` the results go straight to `output` (SendAll: one
//   lock for what fits, Send when the channel is full). With it, the worker
//   reserves a place before each receive and Puts the results under the item's
//   position (engine/ordered_output.h), so the stage's output keeps the input's
//   order.
// - After each item the worker yields to the executor when
//   `yield_after_each_item` (one item is one slice of CPU work).
// - Returns when the input ends, or at once when the output or the ordered
//   output is closed or cancelled (Stop()).
#ifndef SLUICE_ENGINE_MAP_WORKER_H_
#define SLUICE_ENGINE_MAP_WORKER_H_

#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "asio/awaitable.hpp"
#include "engine/channel.h"
#include "engine/load_meter.h"
#include "engine/ordered_output.h"
#include "engine/parallelism_gate.h"
#include "engine/yield.h"

namespace sluice {

template <typename In, typename Out, typename Transform>
asio::awaitable<void> RunMapWorker(Channel<In>* input, Channel<Out>* output,
                                   OrderedOutput<Out>* ordered,
                                   LoadMeter* meter, Transform transform,
                                   bool yield_after_each_item = true,
                                   ParallelismGate* gate = nullptr,
                                   size_t index = 0) {
  std::vector<Out> results;
  while (true) {
    if (gate != nullptr && !gate->Admits(index) &&
        !co_await gate->Wait(index, meter)) {
      co_return;
    }
    if (ordered != nullptr && !co_await ordered->Reserve(meter)) co_return;
    std::optional<Numbered<In>> item = co_await input->ReceiveNumbered(meter);
    if (!item) {
      if (ordered != nullptr) ordered->Release();
      if (gate != nullptr) gate->Close();
      co_return;
    }
    results.clear();
    transform(item->item, results);
    if (ordered != nullptr) {
      if (!co_await ordered->Put(item->position, std::move(results), meter)) {
        co_return;
      }
      results = std::vector<Out>();
    } else {
      if (!co_await output->SendAll(std::span<Out>(results), meter)) {
        co_return;
      }
    }
    if (yield_after_each_item) {
      co_await YieldToOtherCoroutines();
    }
  }
}

}  // namespace sluice

#endif  // SLUICE_ENGINE_MAP_WORKER_H_
