// Mapper: patterns of several nodes mapped to one layer (linear with bias, silu, erf gelu, layer norm).
#include "import/layer_builder.h"
#include "import/onnx_graph_mapper.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace batchfit::onnximport {

const std::vector<int>& Mapper::consumers(const std::string& v) const {
    static const std::vector<int> none;
    auto it = m_consumers.find(v);
    return it == m_consumers.end() ? none : it->second;
}

int Mapper::soleConsumer(const std::string& v) const {
    if (v == m_output) return -1;
    const auto& c = consumers(v);
    return c.size() == 1 ? c[0] : -1;
}

bool Mapper::scalarNear(const std::string& v, double want) {
    auto s = staticScalar(v);
    return s && std::fabs(*s - want) <= 1e-3 * std::max(1.0, std::fabs(want));
}

std::string Mapper::other(const NodeProto& n, const std::string& v) {
    if (n.input_size() != 2) return {};
    if (n.input(0) == v) return n.input(1);
    if (n.input(1) == v) return n.input(0);
    return {};
}

void Mapper::findFusions() {
    m_consumers.clear();
    for (int i = 0; i < m_g->node_size(); ++i) {
        if (!m_needed[static_cast<std::size_t>(i)]) continue;
        std::set<std::string> distinct(m_g->node(i).input().begin(), m_g->node(i).input().end());
        for (const auto& in : distinct)
            if (!in.empty()) m_consumers[in].push_back(i);
    }
    for (int i = 0; i < m_g->node_size(); ++i) {
        if (!m_needed[static_cast<std::size_t>(i)] || m_absorbed[static_cast<std::size_t>(i)]) continue;
        const NodeProto& n = m_g->node(i);
        if (n.op_type() == "MatMul" && n.input_size() == 2 && m_batched.count(n.input(0)))
            fuseLinearBias(i);
        else if (n.op_type() == "Sigmoid" && n.input_size() == 1 && m_batched.count(n.input(0)))
            fuseSilu(i);
        else if (n.op_type() == "Erf" && n.input_size() == 1)
            fuseErfGelu(i);
        else if (n.op_type() == "ReduceMean" && n.input_size() >= 1 && m_batched.count(n.input(0)))
            fuseLayerNorm(i);
    }
}

void Mapper::fuseLinearBias(int i) {
    const NodeProto& mm = m_g->node(i);
    auto w = m_types.find(mm.input(1));
    if (!m_inits.count(mm.input(1)) || w == m_types.end() || w->second.dims.size() != 2) return;
    const int a = soleConsumer(mm.output(0));
    if (a < 0) return;
    const NodeProto& add = m_g->node(a);
    if (add.op_type() != "Add") return;
    const std::string b = other(add, mm.output(0));
    if (b.empty() || !m_inits.count(b)) return;
    auto numel = tensorNumel(*m_inits.at(b));
    if (!numel || static_cast<std::int64_t>(*numel) != w->second.dims[1].value) return;
    auto bt = m_types.find(b);
    if (bt == m_types.end() || bt->second.dims.empty() ||
        bt->second.dims.back().value != w->second.dims[1].value)
        return;
    Fusion f{"linear",
             {{"out_features", w->second.dims[1].value}, {"bias", true}},
             mm.input(0),
             i,
             {mm.input(1), b}};
    m_absorbed[static_cast<std::size_t>(i)] = true;
    m_fusions[a] = std::move(f);
}

void Mapper::fuseSilu(int i) {
    const NodeProto& s = m_g->node(i);
    const int m = soleConsumer(s.output(0));
    if (m < 0) return;
    const NodeProto& mul = m_g->node(m);
    if (mul.op_type() != "Mul" || other(mul, s.output(0)) != s.input(0)) return;
    m_absorbed[static_cast<std::size_t>(i)] = true;
    m_fusions[m] = Fusion{"silu", {}, s.input(0), i, {}};
}

void Mapper::fuseErfGelu(int e) {
    const NodeProto& erf = m_g->node(e);
    auto pd = m_producer.find(erf.input(0));
    if (pd == m_producer.end() || !m_needed[static_cast<std::size_t>(pd->second)]) return;
    const int d = pd->second;
    const NodeProto& div = m_g->node(d);
    if (div.input_size() != 2 || !m_batched.count(div.input(0))) return;
    const std::string x = div.input(0);
    const bool byDiv = div.op_type() == "Div" && scalarNear(div.input(1), std::sqrt(2.0));
    const bool byMul = div.op_type() == "Mul" && scalarNear(div.input(1), std::sqrt(0.5));
    if (!(byDiv || byMul) || soleConsumer(div.output(0)) != e) return;
    const int a = soleConsumer(erf.output(0));
    if (a < 0 || m_g->node(a).op_type() != "Add" || !scalarNear(other(m_g->node(a), erf.output(0)), 1.0))
        return;
    const int m1 = soleConsumer(m_g->node(a).output(0));
    if (m1 < 0 || m_g->node(m1).op_type() != "Mul" || other(m_g->node(m1), m_g->node(a).output(0)) != x)
        return;
    const int m2 = soleConsumer(m_g->node(m1).output(0));
    if (m2 < 0 || m_g->node(m2).op_type() != "Mul" ||
        !scalarNear(other(m_g->node(m2), m_g->node(m1).output(0)), 0.5))
        return;
    for (int k : {d, e, a, m1}) m_absorbed[static_cast<std::size_t>(k)] = true;
    m_fusions[m2] = Fusion{"gelu", {}, x, d, {}};
}

void Mapper::fuseLayerNorm(int i) {
    const NodeProto& rm1 = m_g->node(i);
    const std::string x = rm1.input(0);
    const auto r = rankOf(x);
    auto axes = intsArg(rm1, "axes", 1);
    if (!r || !axes || axes->empty() || static_cast<std::int64_t>(axes->size()) >= *r ||
        !attrInt(rm1, "keepdims", 1))
        return;
    std::vector<std::int64_t> ax;
    for (auto a : *axes) {
        auto k = normAxis(a, *r);
        if (!k) return;
        ax.push_back(*k);
    }
    std::sort(ax.begin(), ax.end());
    const std::int64_t nd = static_cast<std::int64_t>(ax.size());
    for (std::int64_t k = 0; k < nd; ++k)
        if (ax[static_cast<std::size_t>(k)] != *r - nd + k) return;
    auto node = [&](int k) -> const NodeProto& { return m_g->node(k); };
    const int sub = soleConsumer(rm1.output(0));
    if (sub < 0 || node(sub).op_type() != "Sub" || node(sub).input_size() != 2 || node(sub).input(0) != x ||
        node(sub).input(1) != rm1.output(0))
        return;
    const std::string centred = node(sub).output(0);
    const auto& users = consumers(centred);
    if (users.size() != 2 || centred == m_output) return;
    int pw = -1, dv = -1;
    for (int u : users) {
        if (node(u).op_type() == "Pow" && node(u).input_size() == 2 && node(u).input(0) == centred &&
            scalarNear(node(u).input(1), 2.0))
            pw = u;
        else if (node(u).op_type() == "Div" && node(u).input_size() == 2 && node(u).input(0) == centred)
            dv = u;
    }
    if (pw < 0 || dv < 0) return;
    const int rm2 = soleConsumer(node(pw).output(0));
    if (rm2 < 0 || node(rm2).op_type() != "ReduceMean" || intsArg(node(rm2), "axes", 1) != axes) return;
    const int ae = soleConsumer(node(rm2).output(0));
    if (ae < 0 || node(ae).op_type() != "Add") return;
    auto eps = staticScalar(other(node(ae), node(rm2).output(0)));
    if (!eps || !(*eps >= 0.0 && *eps < 1.0)) return;
    const int sq = soleConsumer(node(ae).output(0));
    if (sq < 0 || node(sq).op_type() != "Sqrt" || soleConsumer(node(sq).output(0)) != dv ||
        node(dv).input(1) != node(sq).output(0))
        return;
    std::vector<int> absorbed{i, sub, pw, rm2, ae, sq};
    int anchor = dv;
    std::vector<std::string> weights;
    bool affine = false, bias = false;
    std::uint64_t normNumel = 1;
    if (auto ps = perSample(x)) {
        for (std::int64_t k = static_cast<std::int64_t>(ps->size()) - nd;
             k < static_cast<std::int64_t>(ps->size()); ++k)
            normNumel *= static_cast<std::uint64_t>((*ps)[static_cast<std::size_t>(k)]);
    } else
        return;
    auto isParam = [&](const std::string& v) {
        return m_inits.count(v) && tensorNumel(*m_inits.at(v)).value_or(0) == normNumel;
    };
    const int mul = soleConsumer(node(dv).output(0));
    if (mul >= 0 && node(mul).op_type() == "Mul" && isParam(other(node(mul), node(dv).output(0)))) {
        affine = true;
        weights.push_back(other(node(mul), node(dv).output(0)));
        absorbed.push_back(dv);
        anchor = mul;
        const int add = soleConsumer(node(mul).output(0));
        if (add >= 0 && node(add).op_type() == "Add" && isParam(other(node(add), node(mul).output(0)))) {
            bias = true;
            weights.push_back(other(node(add), node(mul).output(0)));
            absorbed.push_back(mul);
            anchor = add;
        }
    }
    for (int k : absorbed) m_absorbed[static_cast<std::size_t>(k)] = true;
    AttrList a{{"eps", tidy(*eps)}};
    if (nd != 1) a.push_back({"normalized_dims", nd});
    if (!affine)
        a.push_back({"elementwise_affine", false});
    else
        a.push_back({"bias", bias});
    m_fusions[anchor] = Fusion{"layernorm", a, x, i, weights};
}

} // namespace batchfit::onnximport
