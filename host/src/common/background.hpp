#pragma once
// A value computed on a thread of its own while the caller goes on. take()
// joins the thread, so once a value is taken no thread of it remains: the
// run forks right after (a fork copies only the forking thread, and a lock
// held by another thread, of the allocator or a sanitizer, would stay held in
// the child). The destructor joins too.
#include <optional>
#include <thread>
#include <utility>

namespace px {

template <class T>
class Background {
 public:
  template <class F>
  explicit Background(F&& compute)
      : thread_([this, f = std::forward<F>(compute)]() mutable { value_.emplace(f()); }) {}
  ~Background() { join(); }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // Joins the thread and returns its value, once.
  T take() {
    join();
    T out = std::move(*value_);
    value_.reset();
    return out;
  }

 private:
  void join() {
    if (thread_.joinable()) thread_.join();
  }

  std::optional<T> value_;  // before thread_: constructed before the thread that fills it
  std::thread thread_;
};

}  // namespace px
