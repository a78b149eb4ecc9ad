#pragma once
// libgit2, loaded on first use. Most commands never read git, and libgit2
// with what it links (Kerberos, mbedTLS, libssh2, PCRE2: 15 libraries) cost
// every command ≈ 1.5 ms of start-up and every fork its page tables. Code
// calls px::git2::git_xxx(...) with libgit2's own signatures; the first call
// loads the library. Add a function to PX_GIT2_FUNCTIONS before using it.
#include <git2.h>

namespace px::git2 {

// Every libgit2 function Parallex calls.
#define PX_GIT2_FUNCTIONS(X)        \
  X(git_branch_create)              \
  X(git_branch_lookup)              \
  X(git_buf_dispose)                \
  X(git_commit_author)              \
  X(git_commit_committer)           \
  X(git_commit_extract_signature)   \
  X(git_commit_free)                \
  X(git_commit_lookup)              \
  X(git_commit_message)             \
  X(git_commit_parent)              \
  X(git_commit_parentcount)         \
  X(git_commit_summary)             \
  X(git_commit_tree)                \
  X(git_config_free)                \
  X(git_config_iterator_free)       \
  X(git_config_iterator_new)        \
  X(git_config_next)                \
  X(git_config_open_level)          \
  X(git_diff_find_similar)          \
  X(git_diff_free)                  \
  X(git_diff_get_delta)             \
  X(git_diff_num_deltas)            \
  X(git_diff_tree_to_tree)          \
  X(git_error_clear)                \
  X(git_error_last)                 \
  X(git_graph_ahead_behind)         \
  X(git_index_entrycount)           \
  X(git_index_free)                 \
  X(git_index_get_byindex)          \
  X(git_index_open)                 \
  X(git_libgit2_init)               \
  X(git_object_free)                \
  X(git_object_id)                  \
  X(git_object_peel)                \
  X(git_odb_add_backend)            \
  X(git_odb_backend_one_pack)       \
  X(git_odb_foreach)                \
  X(git_odb_free)                   \
  X(git_odb_hash)                   \
  X(git_odb_new)                    \
  X(git_odb_object_data)            \
  X(git_odb_object_free)            \
  X(git_odb_object_size)            \
  X(git_odb_object_type)            \
  X(git_odb_read)                   \
  X(git_oid_fromstr)                \
  X(git_oid_tostr)                  \
  X(git_reference_delete)           \
  X(git_reference_free)             \
  X(git_reference_iterator_free)    \
  X(git_reference_iterator_new)     \
  X(git_reference_list)             \
  X(git_reference_lookup)           \
  X(git_reference_name)             \
  X(git_reference_name_to_id)       \
  X(git_reference_next)             \
  X(git_reference_peel)             \
  X(git_reference_symbolic_target)  \
  X(git_reference_target)           \
  X(git_reference_type)             \
  X(git_reflog_delete)              \
  X(git_repository_commondir)       \
  X(git_repository_config_snapshot) \
  X(git_repository_free)            \
  X(git_repository_head)            \
  X(git_repository_head_detached)   \
  X(git_repository_head_unborn)     \
  X(git_repository_is_bare)         \
  X(git_repository_is_worktree)     \
  X(git_repository_open_ext)        \
  X(git_repository_path)            \
  X(git_repository_workdir)         \
  X(git_revparse_ext)               \
  X(git_revwalk_free)               \
  X(git_revwalk_hide)               \
  X(git_revwalk_new)                \
  X(git_revwalk_next)               \
  X(git_revwalk_push)               \
  X(git_revwalk_sorting)            \
  X(git_status_byindex)             \
  X(git_status_file)                \
  X(git_status_list_entrycount)     \
  X(git_status_list_free)           \
  X(git_status_list_new)            \
  X(git_strarray_dispose)           \
  X(git_tree_free)                  \
  X(git_worktree_add)               \
  X(git_worktree_free)              \
  X(git_worktree_is_locked)         \
  X(git_worktree_list)              \
  X(git_worktree_lookup)            \
  X(git_worktree_path)

struct Api {
#define PX_GIT2_MEMBER(name) decltype(&::name) name = nullptr;
  PX_GIT2_FUNCTIONS(PX_GIT2_MEMBER)
#undef PX_GIT2_MEMBER
};

// Loads libgit2 once, and initialises it (git_libgit2_init). Without it the
// process cannot go on (as if the dynamic loader had failed at start): it
// says so, naming the package, and exits 4.
const Api& api();

template <class F>
struct Forward;
template <class R, class... A>
struct Forward<R (*)(A...)> {
  template <R (*Api::*Member)(A...)>
  static R call(A... args) {
    return (api().*Member)(args...);
  }
};

// px::git2::git_xxx: a function pointer of libgit2's exact type, so it also
// serves where a function is a template argument (deleters).
#define PX_GIT2_FORWARD(name) \
  inline constexpr auto name = &Forward<decltype(&::name)>::template call<&Api::name>;
PX_GIT2_FUNCTIONS(PX_GIT2_FORWARD)
#undef PX_GIT2_FORWARD

}  // namespace px::git2
