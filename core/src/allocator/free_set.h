#pragma once
// The free blocks of one allocator pool in torch's BlockComparatorSize order (size, then address): what
// get_free_block's lower_bound searches. A sorted vector of sorted chunks of at most kChunk keys, so a lookup
// is two binary searches over contiguous memory and an insert or erase moves at most one chunk. A red-black
// tree (std::set) costs a cache miss per level; one sorted vector turns quadratic when a pool holds tens of
// thousands of free pieces, which a hostile or very long trace can make.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace batchfit {

/// One free block: its size and address (the order) and its index in the allocator's block table.
struct FreeKey {
    std::uint64_t size = 0, addr = 0;
    int block = -1;
    // Free blocks of one pool never overlap, so the address alone tells two of the same size apart.
    bool operator<(const FreeKey& o) const { return wide() < o.wide(); }
    bool operator==(const FreeKey& o) const { return size == o.size && addr == o.addr; }

private:
    __extension__ using Wide = unsigned __int128;
    Wide wide() const { return (static_cast<Wide>(size) << 64) | addr; }
};

class FreeSet {
public:
    static constexpr std::size_t kChunk = 128;

    /// A position: chunk and offset. Erasing an element leaves every position before it valid.
    class iterator {
    public:
        using iterator_category = std::bidirectional_iterator_tag;
        using value_type = FreeKey;
        using difference_type = std::ptrdiff_t;
        using pointer = const FreeKey*;
        using reference = const FreeKey&;

        iterator() = default;
        const FreeKey& operator*() const { return (*m_chunks)[m_c][m_i]; }
        const FreeKey* operator->() const { return &(*m_chunks)[m_c][m_i]; }
        iterator& operator++() {
            if (++m_i == (*m_chunks)[m_c].size()) {
                ++m_c;
                m_i = 0;
            }
            return *this;
        }
        iterator& operator--() {
            if (m_i == 0) {
                --m_c;
                m_i = (*m_chunks)[m_c].size();
            }
            --m_i;
            return *this;
        }
        bool operator==(const iterator& o) const { return m_c == o.m_c && m_i == o.m_i; }

    private:
        friend class FreeSet;
        iterator(const std::vector<std::vector<FreeKey>>* chunks, std::size_t c, std::size_t i)
            : m_chunks(chunks), m_c(c), m_i(i) {}
        const std::vector<std::vector<FreeKey>>* m_chunks = nullptr;
        std::size_t m_c = 0, m_i = 0;
    };

    iterator begin() const { return {&m_chunks, 0, 0}; }
    iterator end() const { return {&m_chunks, m_chunks.size(), 0}; }
    bool empty() const { return m_chunks.empty(); }
    std::size_t size() const {
        std::size_t n = 0;
        for (const auto& c : m_chunks) n += c.size();
        return n;
    }

    /// The first key not less than k.
    iterator lower_bound(const FreeKey& k) const {
        const std::size_t c = chunkFor(k);
        if (c == m_chunks.size()) return end();
        const auto& ch = m_chunks[c];
        return {&m_chunks, c, lowerBound(ch, k)};
    }

    void insert(const FreeKey& k) {
        if (m_chunks.empty()) {
            m_chunks.push_back({k});
            m_tails.push_back(k);
            return;
        }
        std::size_t c = std::min(chunkFor(k), m_chunks.size() - 1);
        auto& ch = m_chunks[c];
        ch.insert(ch.begin() + static_cast<std::ptrdiff_t>(lowerBound(ch, k)), k);
        m_tails[c] = ch.back();
        if (ch.size() <= kChunk) return;
        // Split a full chunk in two halves.
        std::vector<FreeKey> upper(ch.begin() + static_cast<std::ptrdiff_t>(ch.size() / 2), ch.end());
        ch.resize(ch.size() / 2);
        m_tails[c] = ch.back();
        const FreeKey tail = upper.back();
        m_chunks.insert(m_chunks.begin() + static_cast<std::ptrdiff_t>(c) + 1, std::move(upper));
        m_tails.insert(m_tails.begin() + static_cast<std::ptrdiff_t>(c) + 1, tail);
    }

    void erase(iterator it) {
        auto& ch = m_chunks[it.m_c];
        ch.erase(ch.begin() + static_cast<std::ptrdiff_t>(it.m_i));
        if (!ch.empty()) {
            m_tails[it.m_c] = ch.back();
            return;
        }
        m_chunks.erase(m_chunks.begin() + static_cast<std::ptrdiff_t>(it.m_c));
        m_tails.erase(m_tails.begin() + static_cast<std::ptrdiff_t>(it.m_c));
    }

    /// Erases k if present.
    void erase(const FreeKey& k) {
        auto it = lower_bound(k);
        if (it != end() && *it == k) erase(it);
    }

private:
    template <class V> static std::size_t lowerBound(const V& v, const FreeKey& k) {
        return static_cast<std::size_t>(std::lower_bound(v.begin(), v.end(), k) - v.begin());
    }

    // The first chunk whose last key is not less than k (m_chunks.size() when k is above every key).
    std::size_t chunkFor(const FreeKey& k) const { return lowerBound(m_tails, k); }

    std::vector<std::vector<FreeKey>> m_chunks;
    std::vector<FreeKey> m_tails; ///< each chunk's largest key
};

} // namespace batchfit
