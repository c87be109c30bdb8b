// Native featurization: fastText's text normalization, tokenization, token counting and the
// bags of word and hashed n-gram rows, bit-identical to the pure-Python reference
// (text.py: normalize_text / tokenize; features.py: Featurizer.fit / transform / _bags).
//
// A plain C ABI loaded with ctypes (native_features.py), so the predictor needs no MXNet.
// Input text arrives already lowercased by Python's str.lower() (exact Unicode case rules) and
// UTF-8 encoded: documents are the byte ranges [ends[d-1] + 1, ends[d]) of one buffer (one
// separator byte between documents). Everything here then works on bytes: the punctuation rules
// are ASCII, and Python's str.split() whitespace is matched as UTF-8 sequences.
//
// Results grow in fixed-size blocks and are copied out block by block, each block freed once
// copied, so handing them to numpy never holds two full copies.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <sys/mman.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// ---- zlib-compatible CRC32 (fastText hashes words with it via features.word_hash) ----------
struct Crc32Table {
  uint32_t t[256];
  Crc32Table() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
  }
};
const Crc32Table kCrc;

uint32_t crc32(const char* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = kCrc.t[(c ^ static_cast<uint8_t>(p[i])) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// ---- normalize + split (text.py) ---------------------------------------------------------
// Bytes of Python's str.split() whitespace at s[i..n): 0 when there is none. The set is every
// code point c with chr(c).isspace() (checked against Python in tests/test_native_features.py).
inline int whitespace_width(const unsigned char* s, size_t i, size_t n) {
  unsigned char c = s[i];
  if (c < 0x80) return (c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x1F)) ? 1 : 0;
  size_t left = n - i;
  if (c == 0xC2 && left >= 2) return (s[i + 1] == 0x85 || s[i + 1] == 0xA0) ? 2 : 0;  // U+0085, U+00A0
  if (left < 3) return 0;
  unsigned char b = s[i + 1], d = s[i + 2];
  if (c == 0xE1) return (b == 0x9A && d == 0x80) ? 3 : 0;  // U+1680
  if (c == 0xE2) {
    if (b == 0x80) return (d <= 0x8A || d == 0xA8 || d == 0xA9 || d == 0xAF) ? 3 : 0;  // U+2000-200A, 2028/9, 202F
    return (b == 0x81 && d == 0x9F) ? 3 : 0;  // U+205F
  }
  if (c == 0xE3) return (b == 0x80 && d == 0x80) ? 3 : 0;  // U+3000
  return 0;
}

// What each byte starts, after lowercasing: part of a token, a separator (ASCII whitespace and
// the ';' ':' that become spaces), a punctuation token of its own (text._SPACED), a possible
// "<br />" (or "<br/>", "<br>": line_break_width), or a possible multi-byte whitespace sequence
// (lead bytes 0xC2, 0xE1, 0xE2, 0xE3).
enum : uint8_t { kToken = 0, kSeparator, kPunctuation, kAngle, kMaybeSpace };
struct ByteClasses {
  uint8_t c[256];
  ByteClasses() {
    std::memset(c, kToken, sizeof(c));
    for (int b = 9; b <= 13; ++b) c[b] = kSeparator;
    for (int b = 0x1C; b <= 0x1F; ++b) c[b] = kSeparator;
    c[' '] = c[';'] = c[':'] = kSeparator;
    for (unsigned char b : std::string(".,()!?'")) c[b] = kPunctuation;
    c['<'] = kAngle;
    c[0xC2] = c[0xE1] = c[0xE2] = c[0xE3] = kMaybeSpace;
  }
};
const ByteClasses kClass;

// Which line breaks are spaces, as the bundle's form says (native_features._line_breaks): "<br />"
// only (forms before text.QUOTES_AND_BREAKS); "<br/>" and "<br>" too (text.reads_every_line_break);
// and a "<br />" the rules form, the rules applied until nothing changes (text.reads_formed_line_breaks).
enum LineBreaks : int32_t { kSpacedBreak = 0, kEveryBreak = 1, kFormedBreaks = 2 };

// Bytes of the HTML line break at text[i..n) (text[i] is '<'): "<br />", and with every_break
// "<br/>" and "<br>" too (text.LINE_BREAKS); 0 when there is none. Each begins with the only '<'
// it has, so matching them left to right, as here, finds what Python's regular expression does.
inline int line_break_width(const char* text, size_t i, size_t n, bool every_break) {
  size_t left = n - i;
  if (left >= 6 && std::memcmp(text + i, "<br />", 6) == 0) return 6;
  if (!every_break) return 0;
  if (left >= 5 && std::memcmp(text + i, "<br/>", 5) == 0) return 5;
  return (left >= 4 && std::memcmp(text + i, "<br>", 4) == 0) ? 4 : 0;
}

// Calls emit(token, length) for every token of one lowercased document, as the rules applied once
// split it (text._punctuation_rules). '"' is dropped before anything else (so "<br "/>" is a line
// break too, as in the order of normalize_text's substitutions): documents holding one are
// copied to `scratch` without it. every_break: "<br/>" and "<br>" are line breaks too.
template <typename Emit>
void split_once(const char* doc, size_t len, std::string& scratch, bool every_break, Emit&& emit) {
  const char* text = doc;
  size_t n = len;
  if (std::memchr(doc, '"', len)) {
    scratch.resize(len);
    n = 0;
    for (size_t i = 0; i < len; ++i)
      if (doc[i] != '"') scratch[n++] = doc[i];
    text = scratch.data();
  }
  const unsigned char* s = reinterpret_cast<const unsigned char*>(text);
  size_t i = 0, start = 0;
  bool in_token = false;
  while (i < n) {
    if (!in_token) start = i, in_token = true;
    while (i < n && kClass.c[s[i]] == kToken) ++i;  // the bulk of the work: plain token bytes
    if (i == n) break;
    int width = 0;  // of the separator at i; -1: a punctuation token; 0: no boundary at i
    switch (kClass.c[s[i]]) {
      case kSeparator: width = 1; break;
      case kPunctuation: width = -1; break;
      case kAngle: width = line_break_width(text, i, n, every_break); break;
      default: width = whitespace_width(s, i, n); break;  // kMaybeSpace
    }
    if (width == 0) {  // '<' or a non-space multi-byte character: part of the token (its other
      ++i;             // bytes are continuation bytes, class kToken)
      continue;
    }
    if (i > start) emit(text + start, i - start);
    in_token = false;
    if (width < 0) emit(text + i, 1);
    i += width < 0 ? 1 : width;
  }
  if (in_token && i > start) emit(text + start, i - start);
}

// The tokens of split_once as the rules applied again and again until nothing changes give them
// (text.FORMED_BREAKS; text._without_formed_line_breaks, in Python). In the rules' result only a
// "<br />" they formed changes it: a token ending in "<br" before one starting with "/>" (joined by
// the result's space). Both lose those ends; one left empty goes, and its neighbours meet
// ("a<br<br />/>b": "a<br />b", then "a b"). Repeating the scan would take one pass a level of such
// nested breaks; instead the tokens that may still lose their end are held on a stack, and each
// new token cancels its leading "/>" against them as it comes: one pass, as Python's. The tokens
// are slices of the document's text (cut by moving their ends: no copy), emitted once nothing
// after them can change them: when the last one held ends in something else than "<br".
using Piece = std::pair<const char*, size_t>;  // a token: its first byte and length

template <typename Emit>
class FormedBreaks {
 public:
  FormedBreaks(std::vector<Piece>& held, Emit& emit) : held_(held), emit_(emit) { held_.clear(); }
  void operator()(const char* p, size_t k) {
    if (held_.empty() && !ends_open(Piece(p, k))) {  // most tokens: nothing held to cancel, nothing to hold
      emit_(p, k);
      return;
    }
    hold(p, k);
  }
  // Out of line, as flush: with more calls of emit_ in operator(), the compiler no longer inlined emit_ (the
  // counter's or encoder's work on a token) into split_once: IMDB-like text counted ~15% slower.
  __attribute__((noinline)) void hold(const char* p, size_t k) {
    while (!held_.empty() && k >= 2 && p[0] == '/' && p[1] == '>' && ends_open(held_.back())) {
      p += 2, k -= 2;
      if ((held_.back().second -= 3) == 0) held_.pop_back();
    }
    if (k) held_.emplace_back(p, k);
    if (!held_.empty() && !ends_open(held_.back())) flush();
  }
  __attribute__((noinline)) void flush() {  // at the document's end, and when nothing can change the tokens held
    for (const Piece& token : held_) emit_(token.first, token.second);
    held_.clear();
  }

 private:
  static bool ends_open(const Piece& t) {
    const char* end = t.first + t.second;
    return t.second >= 3 && end[-1] == 'r' && end[-2] == 'b' && end[-3] == '<';
  }
  std::vector<Piece>& held_;
  Emit& emit_;
};

// What one document's tokens are made with, reused from document to document.
struct Scratch {
  std::string text;         // the document without '"' (split_once)
  std::vector<Piece> held;  // FormedBreaks' tokens
};

// Calls emit(token, length) for every token of one lowercased document, as tokenize() would split
// normalize_text(document) in the bundle's form (`breaks`: LineBreaks). A document without a '<'
// byte cannot form a "<br />" (text.FORMED_BREAKS): the rules write no '<', and the bytes here are
// the text as Python read it (text.lowered: lowercased, in NFC, its typographic quotes dropped),
// so it is split once, with nothing held. (Nor could the raw text's: no character lowercases to
// '<' or decomposes into one in NFC, the quotes dropped are not '<', and a '"' dropped here only
// joins what is on either side of it.)
template <typename Emit>
void tokenize(const char* doc, size_t len, Scratch& scratch, int32_t breaks, Emit&& emit) {
  if (breaks < kFormedBreaks || !std::memchr(doc, '<', len)) {
    split_once(doc, len, scratch.text, breaks >= kEveryBreak, emit);
    return;
  }
  FormedBreaks<Emit> cancel(scratch.held, emit);
  split_once(doc, len, scratch.text, true, cancel);
  cancel.flush();
}

// ---- a string -> index hash table over an append-only arena ---------------------------------
inline uint64_t key_hash(const char* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xFF51AFD7ED558CCDull);
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    h = (h ^ v) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    p += 8, n -= 8;
  }
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  h = (h ^ v) * 0x94D049BB133111EBull;
  return h ^ (h >> 29);
}

class TokenTable {
 public:
  TokenTable() : slots_(1024), mask_(1023) { starts_.push_back(0); }
  int64_t size() const { return static_cast<int64_t>(starts_.size()) - 1; }
  const std::string& arena() const { return arena_; }
  const std::vector<uint64_t>& starts() const { return starts_; }

  // Index of the token, or -1 when absent (and add is false). Read-only when add is false.
  int64_t find(const char* p, size_t n, bool add) {
    uint64_t h = key_hash(p, n);
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (uint64_t slot = h & mask_;; slot = (slot + 1) & mask_) {
      const Slot& at = slots_[slot];
      if (at.index_plus_one == 0) {
        if (!add) return -1;
        int64_t k = size();
        slots_[slot] = Slot{tag, static_cast<uint32_t>(k + 1)};
        arena_.append(p, n);
        starts_.push_back(arena_.size());
        if (2 * (k + 1) > static_cast<int64_t>(slots_.size())) grow();
        return k;
      }
      if (at.tag == tag) {  // the tag spares the arena (a cache miss) on most mismatches
        int64_t k = at.index_plus_one - 1;
        if (starts_[k + 1] - starts_[k] == n && std::memcmp(arena_.data() + starts_[k], p, n) == 0) return k;
      }
    }
  }

 private:
  struct Slot {
    uint32_t tag = 0;             // high half of the key hash
    uint32_t index_plus_one = 0;  // 0: empty
  };

  void grow() {
    std::vector<Slot> bigger(slots_.size() * 2);
    uint64_t mask = bigger.size() - 1;
    for (int64_t k = 0; k < size(); ++k) {
      const char* p = arena_.data() + starts_[k];
      uint64_t h = key_hash(p, starts_[k + 1] - starts_[k]);
      uint64_t slot = h & mask;
      while (bigger[slot].index_plus_one) slot = (slot + 1) & mask;
      bigger[slot] = Slot{static_cast<uint32_t>(h >> 32), static_cast<uint32_t>(k + 1)};
    }
    slots_.swap(bigger);
    mask_ = mask;
  }

  std::vector<Slot> slots_;
  uint64_t mask_;
  std::string arena_;             // token bytes, back to back
  std::vector<uint64_t> starts_;  // token k is arena_[starts_[k], starts_[k + 1])
};

// Ascending sort of non-negative int32 rows: LSD radix over bytes, skipping bytes all keys share
// (std::sort's comparisons mispredict on random rows: this is several times faster per document).
void sort_rows(std::vector<int32_t>& a, std::vector<int32_t>& tmp) {
  size_t n = a.size();
  if (n < 48) {
    for (size_t i = 1; i < n; ++i) {
      int32_t v = a[i];
      size_t j = i;
      for (; j > 0 && a[j - 1] > v; --j) a[j] = a[j - 1];
      a[j] = v;
    }
    return;
  }
  uint32_t count[4][256] = {};
  for (int32_t v : a) {
    uint32_t u = static_cast<uint32_t>(v);
    ++count[0][u & 255], ++count[1][(u >> 8) & 255], ++count[2][(u >> 16) & 255], ++count[3][u >> 24];
  }
  tmp.resize(n);
  int32_t* src = a.data();
  int32_t* dst = tmp.data();
  for (int pass = 0; pass < 4; ++pass) {
    int shift = 8 * pass;
    uint32_t* c = count[pass];
    if (c[(static_cast<uint32_t>(src[0]) >> shift) & 255] == n) continue;  // every key has this byte
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      uint32_t k = c[d];
      c[d] = sum;
      sum += k;
    }
    for (size_t i = 0; i < n; ++i) dst[c[(static_cast<uint32_t>(src[i]) >> shift) & 255]++] = src[i];
    std::swap(src, dst);
  }
  if (src != a.data()) std::memcpy(a.data(), src, n * sizeof(int32_t));
}

// ---- growable output in blocks, moved out block by block --------------------------------------
// Block pages come straight from the kernel and go straight back when a block is freed. Through
// malloc a freed block stays resident in the process heap (behind later allocations), so a corpus'
// token ids (~350 MB at Yelp size) would stay in RSS after being copied to numpy.
template <typename T>
struct PageAllocator {
  using value_type = T;
  PageAllocator() = default;
  template <typename U>
  PageAllocator(const PageAllocator<U>&) {}
  T* allocate(size_t n) {
    if (n == 0) return nullptr;
    void* p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (p) munmap(p, n * sizeof(T));
  }
  template <typename U>
  bool operator==(const PageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const PageAllocator<U>&) const { return false; }
};

template <typename T>
class Blocks {
 public:
  // Blocks grow from 4,096 values to 2^20 by doubling: one 2^20 block each for rows and weights reserved 8 MB
  // of address space per encoder (and per thread's part) for a request of one review, and under a ulimit -v
  // predict ran out of memory at 690 MB, where it had room for everything else.
  static constexpr size_t kFirstBlock = size_t(1) << 12, kBlock = size_t(1) << 20;
  void push(T v) {
    if (blocks_.empty() || blocks_.back().size() == blocks_.back().capacity()) {
      blocks_.emplace_back();
      blocks_.back().reserve(next_);
      next_ = std::min(kBlock, next_ * 2);
    }
    blocks_.back().push_back(v);
    ++size_;
  }
  int64_t size() const { return static_cast<int64_t>(size_); }
  void append(Blocks&& other) {  // moves other's blocks to the end (a partly filled block may stay inside)
    if (!other.blocks_.empty()) other.blocks_.back().shrink_to_fit();  // a part's last block is partly filled
    for (auto& b : other.blocks_) blocks_.push_back(std::move(b));
    size_ += other.size_;
    other.blocks_.clear(), other.size_ = 0;
  }
  // Appends the full blocks (every block with all) to the file fd and frees them; size() still
  // counts them, and move_to then copies only what stayed. 0, or the errno of a failed write.
  int spill(int fd, bool all) {
    size_t n = blocks_.size();
    if (!all && n && blocks_.back().size() < blocks_.back().capacity()) --n;  // the block being filled stays
    for (size_t i = 0; i < n; ++i) {
      const char* p = reinterpret_cast<const char*>(blocks_[i].data());
      size_t left = blocks_[i].size() * sizeof(T);
      while (left) {
        const ssize_t k = write(fd, p, left);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EIO;
        p += k, left -= static_cast<size_t>(k);
      }
      std::vector<T, PageAllocator<T>>().swap(blocks_[i]);
    }
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(n));
    return 0;
  }
  void move_to(T* out) {  // copies everything into out and frees it
    for (auto& b : blocks_) {
      std::memcpy(out, b.data(), b.size() * sizeof(T));
      out += b.size();
      std::vector<T, PageAllocator<T>>().swap(b);
    }
    blocks_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::vector<T, PageAllocator<T>>> blocks_;
  size_t size_ = 0, next_ = kFirstBlock;
};

// ---- bags (features.Featurizer._bags) -------------------------------------------------------
constexpr uint64_t kNgramPrime = 116049371;  // fastText's n-gram multiplier

// Words of a document folded into its bag at a time (Encoder::fold_piece): a document's features, sorted, took
// 8 bytes a word for unigrams, 20 with bigrams, while its bag is at most one entry per distinct row (a 62 MB
// review with bigrams peaked at ~1.4 GB in predict). Settable for tests (ft_set_piece_words).
std::atomic<int64_t> g_piece_words{int64_t(1) << 20};

struct Encoder {
  int ngrams;
  int64_t buckets, vocab_size, unk_id;
  uint32_t unk_hash;
  Blocks<int32_t> rows;
  Blocks<float> weights;
  std::vector<int64_t> offsets{0};
  // The current document: its words' rows (then its n-grams' rows: add_ngrams), and its words' hashes (CRC32s),
  // kept only for n-grams. The words went to a vector of int64 ids and one of uint64 hashes first, then were
  // copied into features: 20 bytes a token beside features' 4, ~500 MB at the peak for one review of 60 MB.
  std::vector<int32_t> features, sort_buffer;
  std::vector<uint32_t> hashes;
  Scratch scratch;
  // A long document is folded into its bag piece_words words at a time: the distinct rows of the pieces so far
  // (ascending) with their counts, and how many features they had. The counts are whole numbers, so the bag (each
  // count / the document's features, in double) is the one made from all its features at once, bit for bit.
  // hashes then begins with the last ngrams - 1 words of the pieces before (`carried`), for the n-grams across.
  size_t piece_words = static_cast<size_t>(g_piece_words.load(std::memory_order_relaxed));
  std::vector<int32_t> folded_rows, merged_rows;
  std::vector<int64_t> folded_counts, merged_counts;
  int64_t folded_features = 0;
  size_t carried = 0;
  bool folded = false;

  void add_word(int64_t id, uint32_t hash) {
    features.push_back(static_cast<int32_t>(id));
    if (ngrams > 1) hashes.push_back(hash);
    if (features.size() >= piece_words) fold_piece();
  }

  // The current document's (or piece's) features, sorted: its words' rows (one <unk> for an empty document) and
  // the bucket row (vocab_size + hash % buckets) of each n-gram that ends in it.
  void add_ngrams() {
    if (features.empty() && !folded) {
      features.push_back(static_cast<int32_t>(unk_id));
      if (ngrams > 1) hashes.push_back(unk_hash);
    }
    const size_t len = hashes.size();
    size_t total = features.size();
    // order-n n-grams starting at i < first(n) ended in the pieces before: counted there
    auto first = [&](size_t n) { return carried + 1 > n ? carried + 1 - n : 0; };
    for (size_t n = 2; n <= static_cast<size_t>(ngrams) && n <= len; ++n) total += len - n + 1 - std::min(first(n), len - n + 1);
    features.reserve(total);  // (exactly: grown by doubling, a long review's features took up to twice their size)
    for (size_t n = 2; n <= static_cast<size_t>(ngrams) && n <= len; ++n) {
      for (size_t i = first(n); i + n <= len; ++i) {
        uint64_t g = hashes[i];
        for (size_t k = 1; k < n; ++k) g = g * kNgramPrime + hashes[i + k];
        features.push_back(static_cast<int32_t>(vocab_size + static_cast<int64_t>(g % static_cast<uint64_t>(buckets))));
      }
    }
    sort_rows(features, sort_buffer);
  }

  // Folds the words in features (and the n-grams ending in them) into folded_rows / folded_counts, keeping the
  // last ngrams - 1 hashes for the next piece's n-grams.
  void fold_piece() {
    add_ngrams();
    folded_features += static_cast<int64_t>(features.size());
    size_t distinct = 0;
    for (size_t i = 0; i < features.size(); ++i) distinct += i == 0 || features[i] != features[i - 1];
    merged_rows.clear(), merged_counts.clear();
    merged_rows.reserve(folded_rows.size() + distinct), merged_counts.reserve(folded_rows.size() + distinct);
    size_t a = 0, i = 0;
    while (a < folded_rows.size() || i < features.size()) {
      if (i == features.size() || (a < folded_rows.size() && folded_rows[a] < features[i])) {
        merged_rows.push_back(folded_rows[a]), merged_counts.push_back(folded_counts[a]), ++a;
        continue;
      }
      size_t j = i + 1;
      while (j < features.size() && features[j] == features[i]) ++j;
      int64_t count = static_cast<int64_t>(j - i);
      if (a < folded_rows.size() && folded_rows[a] == features[i]) count += folded_counts[a++];
      merged_rows.push_back(features[i]), merged_counts.push_back(count);
      i = j;
    }
    folded_rows.swap(merged_rows), folded_counts.swap(merged_counts);
    carried = std::min(hashes.size(), static_cast<size_t>(ngrams - 1));
    hashes.erase(hashes.begin(), hashes.end() - static_cast<std::ptrdiff_t>(carried));
    features.clear();
    folded = true;
  }

  void clear_document() {
    features.clear(), hashes.clear();
    if (folded) {  // a long document's: its pieces' memory goes back (the training encoder lives on)
      for (auto* v : {&folded_rows, &merged_rows}) std::vector<int32_t>().swap(*v);
      for (auto* v : {&folded_counts, &merged_counts}) std::vector<int64_t>().swap(*v);
      std::vector<int32_t>().swap(features), std::vector<int32_t>().swap(sort_buffer);
      std::vector<uint32_t>().swap(hashes);
    }
    folded_features = 0, carried = 0, folded = false;
  }

  // Calls emit(row, weight) for each distinct row of the current document, ascending, weight count / number of
  // features computed in double and rounded to float as numpy does; then clears the document.
  template <typename Emit>
  void take_document(Emit&& emit) {
    if (!folded) {
      add_ngrams();
      const double total = static_cast<double>(features.size());
      for (size_t i = 0; i < features.size();) {
        size_t j = i + 1;
        while (j < features.size() && features[j] == features[i]) ++j;
        emit(features[i], static_cast<float>(static_cast<double>(j - i) / total));
        i = j;
      }
    } else {
      if (!features.empty()) fold_piece();
      const double total = static_cast<double>(folded_features);
      for (size_t i = 0; i < folded_rows.size(); ++i)
        emit(folded_rows[i], static_cast<float>(static_cast<double>(folded_counts[i]) / total));
    }
    clear_document();
  }

  // Appends the bag of the current document.
  void add_document() {
    take_document([&](int32_t row, float weight) { rows.push(row), weights.push(weight); });
    offsets.push_back(rows.size());
  }

  Encoder part() const {  // an empty encoder with the same settings, for one thread's documents
    Encoder e;
    e.ngrams = ngrams, e.buckets = buckets, e.vocab_size = vocab_size, e.unk_id = unk_id, e.unk_hash = unk_hash;
    return e;
  }

  void append(Encoder&& part) {
    int64_t base = rows.size();
    for (size_t d = 1; d < part.offsets.size(); ++d) offsets.push_back(base + part.offsets[d]);
    rows.append(std::move(part.rows));
    weights.append(std::move(part.weights));
  }
};

// part(t) for every t in [0, parts): part 0 in this thread, the others each in a thread of its own. A thread
// that cannot start (std::system_error: no address space left for its stack under a ulimit -v, or no thread
// left to the process) has its part run here instead, the same work in the same place, only later: a pool
// left holding started threads when that exception passed was std::terminate (predict aborted, exit 134).
// part must not throw. Allocates nothing but the pool, and runs every part here if that cannot be had.
template <typename Part>
void run_parts(int parts, const Part& part) {
  std::vector<std::thread> pool;
  try {
    pool.reserve(parts);
  } catch (const std::bad_alloc&) {
    parts = -parts;  // every part here
  }
  for (int t = 1; t < std::abs(parts); ++t) {
    try {
      if (parts < 0) throw std::bad_alloc();
      pool.emplace_back(part, t);
    } catch (...) {
      part(t);
    }
  }
  part(0);
  for (auto& th : pool) th.join();
}

// Runs encode(first_doc, end_doc, encoder) over up to `threads` contiguous runs of documents of
// about equal work (work[d]: cumulative work to the end of document d), each into its own
// encoder, then appends them in order: the same bags as one thread would make.
template <typename Encode>
void encode_in_parallel(Encoder& e, int64_t n_docs, const int64_t* work, int threads, Encode&& encode) {
  int64_t total = n_docs ? work[n_docs - 1] : 0;
  if (threads > 1 && total < (int64_t(1) << 16)) threads = 1;  // not worth a thread
  if (threads <= 1 || n_docs < 2) {
    encode(0, n_docs, e);
    return;
  }
  std::vector<int64_t> cut{0};
  for (int t = 1; t < threads; ++t) {
    int64_t goal = total * t / threads;
    cut.push_back(std::max(cut.back(), static_cast<int64_t>(std::lower_bound(work, work + n_docs, goal) - work)));
  }
  cut.push_back(n_docs);
  std::vector<Encoder> parts;
  for (int t = 0; t < threads; ++t) parts.push_back(e.part());
  std::vector<std::exception_ptr> errors(threads);
  run_parts(threads, [&](int t) {
    try {
      encode(cut[t], cut[t + 1], parts[t]);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  });
  for (auto& err : errors)
    if (err) std::rethrow_exception(err);
  for (auto& part : parts) e.append(std::move(part));
}

struct Counter {
  TokenTable table;
  std::vector<int64_t> counts;
  Blocks<uint8_t> codes;  // every token's id as a varint (features.pack_ids' format): ~1.55 bytes, not 4
  int64_t tokens = 0;
  std::vector<int64_t> lengths, byte_ends;
  Scratch scratch;
};

inline void push_varint(Blocks<uint8_t>& out, uint32_t v) {
  while (v >= 0x80) out.push(static_cast<uint8_t>(v & 0x7F) | 0x80), v >>= 7;
  out.push(static_cast<uint8_t>(v));
}

struct Vocab {
  TokenTable table;
  std::vector<int64_t> ids;
  std::vector<uint32_t> hashes;
};

template <typename PerDoc>
void for_each_document(const char* buf, const int64_t* ends, int64_t n_docs, PerDoc&& per_doc) {
  int64_t start = 0;
  for (int64_t d = 0; d < n_docs; ++d) {
    per_doc(buf + start, static_cast<size_t>(ends[d] - start));
    start = ends[d] + 1;
  }
}

}  // namespace

// ---- C ABI: every call returns 0, or -1 when out of memory ---------------------------------------
#define GUARD(body)               \
  try {                           \
    body;                         \
    return 0;                     \
  } catch (const std::bad_alloc&) { \
    return -1;                    \
  }

extern "C" {

uint32_t ft_crc32(const char* p, int64_t n) { return crc32(p, static_cast<size_t>(n)); }

// Tokens of one document, back to back, separated by one space (for tests of the tokenizer).
int64_t ft_tokenize(const char* doc, int64_t len, char* out, int32_t breaks) {
  Scratch scratch;
  int64_t n = 0;
  tokenize(doc, static_cast<size_t>(len), scratch, breaks, [&](const char* p, size_t k) {
    if (n) out[n++] = ' ';
    std::memcpy(out + n, p, k);
    n += static_cast<int64_t>(k);
  });
  return n;
}

// The number of tokens of n_docs documents in all (schedule.mean_tokens), or -1 when out of memory. Only counted:
// the counter (ft_counter_add) also looks every token up and packs its id, 5 times as long for Yelp-shaped text.
int64_t ft_count_tokens(const char* buf, const int64_t* ends, int64_t n_docs, int32_t breaks) {
  Scratch scratch;
  int64_t n = 0;
  try {
    for_each_document(buf, ends, n_docs, [&](const char* doc, size_t len) {
      tokenize(doc, len, scratch, breaks, [&](const char*, size_t) { ++n; });
    });
  } catch (const std::bad_alloc&) {
    return -1;
  }
  return n;
}

// Counting (Featurizer.fit): tokens get ids in first-seen order; every document's ids are kept,
// packed as varints (frequent words are met early, so their ids are small: one or two bytes).
void* ft_counter_new() { return new (std::nothrow) Counter(); }
void ft_counter_free(void* c) { delete static_cast<Counter*>(c); }

int ft_counter_add(void* handle, const char* buf, const int64_t* ends, int64_t n_docs, int32_t breaks) {
  auto& c = *static_cast<Counter*>(handle);
  GUARD(for_each_document(buf, ends, n_docs, [&](const char* doc, size_t len) {
    int64_t before = c.tokens;
    tokenize(doc, len, c.scratch, breaks, [&](const char* p, size_t k) {
      int64_t id = c.table.find(p, k, true);
      if (id == static_cast<int64_t>(c.counts.size())) c.counts.push_back(0);
      ++c.counts[id];
      push_varint(c.codes, static_cast<uint32_t>(id));
      ++c.tokens;
    });
    c.lengths.push_back(c.tokens - before);
    c.byte_ends.push_back(c.codes.size());
  }))
}

// Appends the packed ids counted so far to the file fd (data.read_counted keeps them in an unlinked
// temporary file: the page cache, not the process, holds them). all=0: only full blocks, called
// between chunks; all=1: everything, after the last chunk (ft_counter_take then copies no codes).
// 0, or the errno of a failed write.
int ft_counter_spill(void* handle, int fd, int32_t all) {
  return static_cast<Counter*>(handle)->codes.spill(fd, all != 0);
}

// The byte ranges [starts[i], ends[i]) of the file fd, back to back into out (a batch's documents
// of spilled packed ids, features.TokenBags). 0, or the errno of a failed read (EIO: past the end).
int ft_read_ranges(int fd, const int64_t* starts, const int64_t* ends, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = starts[i], left = ends[i] - starts[i];
    while (left > 0) {
      const ssize_t k = pread(fd, out, static_cast<size_t>(left), static_cast<off_t>(at));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return k < 0 ? errno : EIO;
      out += k, at += k, left -= k;
    }
  }
  return 0;
}

// sizes[0..4] = distinct tokens, their total bytes, tokens, documents, bytes of the packed ids
void ft_counter_sizes(void* handle, int64_t* sizes) {
  auto& c = *static_cast<Counter*>(handle);
  sizes[0] = c.table.size(), sizes[1] = c.table.arena().size(), sizes[2] = c.tokens,
  sizes[3] = static_cast<int64_t>(c.lengths.size()), sizes[4] = c.codes.size();
}

// Moves out the distinct tokens (each followed by '\n': a token never holds whitespace), their
// counts and CRC32s, then every document's packed token ids, where each document ends in them,
// and its number of tokens.
void ft_counter_take(void* handle, char* words, int64_t* counts, int64_t* hashes, uint8_t* codes, int64_t* byte_ends,
                     int64_t* lengths) {
  auto& c = *static_cast<Counter*>(handle);
  const std::string& arena = c.table.arena();
  const auto& st = c.table.starts();
  for (int64_t k = 0; k < c.table.size(); ++k) {
    size_t len = st[k + 1] - st[k];
    std::memcpy(words, arena.data() + st[k], len);
    words[len] = '\n';
    words += len + 1;
    counts[k] = c.counts[k];
    hashes[k] = crc32(arena.data() + st[k], len);
  }
  c.codes.move_to(codes);
  std::memcpy(byte_ends, c.byte_ends.data(), c.byte_ends.size() * sizeof(int64_t));
  std::memcpy(lengths, c.lengths.data(), c.lengths.size() * sizeof(int64_t));
}

// The values of n_tokens varint-packed ids (features.pack_ids' format), as int32.
void ft_unpack_ids(const uint8_t* codes, int64_t n_tokens, int32_t* out) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    uint32_t v = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t b = *codes++;
      v |= static_cast<uint32_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) break;
    }
    out[t] = static_cast<int32_t>(v);
  }
}

// A vocabulary for encoding text (Featurizer.transform): token bytes[starts[k], starts[k + 1]) has id ids[k].
void* ft_vocab_new(const char* bytes, const int64_t* starts, const int64_t* ids, int64_t n) {
  auto* v = new (std::nothrow) Vocab();
  if (!v) return nullptr;
  try {
    for (int64_t k = 0; k < n; ++k) {
      const char* p = bytes + starts[k];
      size_t len = static_cast<size_t>(starts[k + 1] - starts[k]);
      int64_t at = v->table.find(p, len, true);
      if (at == static_cast<int64_t>(v->ids.size())) {  // the first id wins for a repeated token
        v->ids.push_back(ids[k]);
        v->hashes.push_back(crc32(p, len));
      }
    }
  } catch (const std::bad_alloc&) {
    delete v;
    return nullptr;
  }
  return v;
}
void ft_vocab_free(void* v) { delete static_cast<Vocab*>(v); }

void* ft_encoder_new(int32_t ngrams, int64_t buckets, int64_t vocab_size, int64_t unk_id, uint32_t unk_hash) {
  auto* e = new (std::nothrow) Encoder();
  if (e) e->ngrams = ngrams, e->buckets = buckets, e->vocab_size = vocab_size, e->unk_id = unk_id, e->unk_hash = unk_hash;
  return e;
}
void ft_encoder_free(void* e) { delete static_cast<Encoder*>(e); }

// Encodes lowercased text with a vocabulary: unknown words are <unk> with their own CRC32.
int ft_encoder_add_text(void* handle, const void* vocab, const char* buf, const int64_t* ends, int64_t n_docs,
                        int32_t threads, int32_t breaks) {
  auto& e = *static_cast<Encoder*>(handle);
  auto& v = *const_cast<Vocab*>(static_cast<const Vocab*>(vocab));  // only read (find without add)
  GUARD(encode_in_parallel(e, n_docs, ends, threads, [&](int64_t first, int64_t end, Encoder& out) {
    int64_t start = first ? ends[first - 1] + 1 : 0;
    for (int64_t d = first; d < end; ++d) {
      tokenize(buf + start, static_cast<size_t>(ends[d] - start), out.scratch, breaks, [&](const char* p, size_t k) {
        int64_t at = v.table.find(p, k, false);
        out.add_word(at < 0 ? out.unk_id : v.ids[at], at < 0 ? crc32(p, k) : v.hashes[at]);
      });
      out.add_document();
      start = ends[d] + 1;
    }
  }))
}

// Encodes counted documents: token t of the corpus is word to_id[ids[t]] with hash to_hash[ids[t]];
// token_ends[d] is the end of document d's tokens in ids.
int ft_encoder_add_ids(void* handle, const int32_t* ids, const int64_t* token_ends, int64_t n_docs,
                       const int64_t* to_id, const int64_t* to_hash, int32_t threads) {
  auto& e = *static_cast<Encoder*>(handle);
  GUARD(encode_in_parallel(e, n_docs, token_ends, threads, [&](int64_t first, int64_t end, Encoder& out) {
    for (int64_t d = first; d < end; ++d) {
      for (int64_t t = d ? token_ends[d - 1] : 0; t < token_ends[d]; ++t) {
        out.add_word(to_id[ids[t]], static_cast<uint32_t>(to_hash[ids[t]]));  // (CRC32s: 32 bits)
      }
      out.add_document();
    }
  }))
}

// Document means for prediction (predict.py): out[d] = sum_e weights[e] * table[rows[e]] over
// document d's entries, summed in entry order in float (as bag_ops.cc's fasttext_bag_mean, so the
// same numbers as training's forward pass). Returns -1 if a row is outside the table (nothing is
// read there), else 0. Threads split the documents; each document is summed by one thread.
// add: each sum goes on from what out holds (a document's entries given a slice at a time, summed in the same
// order as in one call: the same bits), instead of from 0.
int ft_bag_mean(const float* table, int64_t table_rows, int64_t dim, const int32_t* rows, const float* weights,
                const int64_t* offsets, int64_t n_docs, float* out, int32_t threads, int32_t add) {
  for (int64_t e = 0; e < offsets[n_docs]; ++e)
    if (rows[e] < 0 || rows[e] >= table_rows) return -1;
  auto run = [&](int64_t first, int64_t end) {
    for (int64_t d = first; d < end; ++d) {
      float* acc = out + d * dim;
      if (!add) std::memset(acc, 0, dim * sizeof(float));
      for (int64_t e = offsets[d]; e < offsets[d + 1]; ++e) {
        if (e + 8 < offsets[n_docs])  // a later entry's row: its cache misses overlap this sum
          for (int64_t k = 0; k < dim; k += 16) __builtin_prefetch(table + static_cast<int64_t>(rows[e + 8]) * dim + k);
        const float w = weights[e];
        const float* row = table + static_cast<int64_t>(rows[e]) * dim;
        for (int64_t k = 0; k < dim; ++k) acc[k] += w * row[k];
      }
    }
  };
  if (threads <= 1 || offsets[n_docs] * dim < (int64_t(1) << 20)) {  // small requests: no thread start-up
    run(0, n_docs);
    return 0;
  }
  const int64_t total = offsets[n_docs];
  auto cut = [&](int t) {  // (nondecreasing in t: a document is one thread's)
    return t == threads ? n_docs
        : static_cast<int64_t>(std::lower_bound(offsets, offsets + n_docs + 1, total * t / threads) - offsets);
  };
  run_parts(threads, [&](int t) { run(cut(t), cut(t + 1)); });
  return 0;
}

// The embedding table's initial values (init_rows.py): out[i][k] = uniform in [-scale, scale) as a pure
// function of (seed, row first + i, k), so that any row can be regenerated alone (compact bundles).
// The same float32 operations as the numpy reference, bit for bit.
static inline uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Row r's k-th initial value under key = splitmix64(seed).
static inline float initial_value(uint64_t key, uint64_t row, int64_t dim, int64_t k, float scale) {
  const uint64_t z = splitmix64(key ^ (row * static_cast<uint64_t>(dim) + static_cast<uint64_t>(k)));
  const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  return (unit * 2.0f - 1.0f) * scale;
}

// run(first, end) over rows [0, n_rows), split across threads when the work is large enough.
extern "C++" {  // a template, inside this file's extern "C" block
template <typename Run>
static void over_rows(int64_t n_rows, int64_t dim, int32_t threads, const Run& run) {
  if (threads <= 1 || n_rows * dim < (int64_t(1) << 20)) {
    run(int64_t(0), n_rows);
    return;
  }
  run_parts(threads, [&](int t) { run(n_rows * t / threads, n_rows * (t + 1) / threads); });
}
}  // extern "C++"

void ft_uniform_rows(uint64_t seed, const int64_t* rows, int64_t n_rows, int64_t dim, float scale, float* out,
                     int32_t threads) {
  const uint64_t key = splitmix64(seed);
  over_rows(n_rows, dim, threads, [&](int64_t first, int64_t end) {
    for (int64_t i = first; i < end; ++i) {
      float* o = out + i * dim;
      for (int64_t k = 0; k < dim; ++k) o[k] = initial_value(key, static_cast<uint64_t>(rows[i]), dim, k, scale);
    }
  });
}

// Which rows of a (n_rows, dim) table differ from their initial value (compact bundles): changed[i] = 1
// when any table[i][k] != the value ft_uniform_rows gives (float comparison, as the numpy reference
// compact.changed_rows). A changed row usually differs at its first value, so the scan stops there; an
// unchanged row costs its regeneration, without a temporary table.
void ft_changed_rows(uint64_t seed, const float* table, int64_t n_rows, int64_t dim, float scale, uint8_t* changed,
                     int32_t threads) {
  const uint64_t key = splitmix64(seed);
  over_rows(n_rows, dim, threads, [&](int64_t first, int64_t end) {
    for (int64_t i = first; i < end; ++i) {
      const float* row = table + i * dim;
      uint8_t differs = 0;
      for (int64_t k = 0; k < dim && !differs; ++k)
        differs = row[k] != initial_value(key, static_cast<uint64_t>(i), dim, k, scale);
      changed[i] = differs;
    }
  });
}

// The bags of chosen documents of a counted corpus, in the given order, into caller-sized arrays
// (training's batches: features.TokenBags): document i is lengths[i] varint-packed tokens (LEB128:
// 7 bits a byte, low bits first, the high bit on every byte of a token but its last) from byte
// starts[i] of codes, token value v being word to_id[v] with hash to_hash[v].
// The caller sizes rows/weights by the bound of every document's features; returns the entries
// written (-1: out of memory).
int64_t ft_encode_selected(const uint8_t* codes, const int64_t* starts, const int64_t* lengths, int64_t n_docs,
                           const int64_t* to_id, const int64_t* to_hash, int32_t ngrams, int64_t buckets,
                           int64_t vocab_size, int64_t unk_id, uint32_t unk_hash, int32_t* rows, float* weights,
                           int64_t* offsets) {
  try {
    thread_local Encoder e;  // its scratch vectors are reused from batch to batch
    e.ngrams = ngrams, e.buckets = buckets, e.vocab_size = vocab_size, e.unk_id = unk_id, e.unk_hash = unk_hash;
    int64_t nnz = 0;
    offsets[0] = 0;
    e.piece_words = static_cast<size_t>(g_piece_words.load(std::memory_order_relaxed));
    for (int64_t d = 0; d < n_docs; ++d) {
      e.clear_document();
      const uint8_t* p = codes + starts[d];
      for (int64_t t = 0; t < lengths[d]; ++t) {
        uint32_t v = 0;
        for (int shift = 0;; shift += 7) {
          const uint8_t b = *p++;
          v |= static_cast<uint32_t>(b & 0x7F) << shift;
          if (!(b & 0x80)) break;
        }
        e.add_word(to_id[v], static_cast<uint32_t>(to_hash[v]));  // (CRC32s: 32 bits)
      }
      e.take_document([&](int32_t row, float weight) {  // Encoder::add_document's bag, written straight to the output
        rows[nnz] = row, weights[nnz] = weight;
        ++nnz;
      });
      offsets[d + 1] = nnz;
    }
    return nnz;
  } catch (const std::bad_alloc&) {
    return -1;
  }
}

// Sets how many words of a long document are folded into its bag at a time (encoders made from now on; at least
// 1), and returns the setting before: for tests of the folding (tests/test_native_features.py).
int64_t ft_set_piece_words(int64_t words) {
  return g_piece_words.exchange(std::max<int64_t>(1, words));
}

// sizes[0..1] = entries, documents
void ft_encoder_sizes(void* handle, int64_t* sizes) {
  auto& e = *static_cast<Encoder*>(handle);
  sizes[0] = e.rows.size(), sizes[1] = static_cast<int64_t>(e.offsets.size()) - 1;
}

void ft_encoder_take(void* handle, int32_t* rows, float* weights, int64_t* offsets) {
  auto& e = *static_cast<Encoder*>(handle);
  std::memcpy(offsets, e.offsets.data(), e.offsets.size() * sizeof(int64_t));
  e.rows.move_to(rows);
  e.weights.move_to(weights);
  e.offsets.assign(1, 0);
}

}  // extern "C"
