#include "report/serving_report.h"

#include "report/component_palette.h"
#include "report/report_canvas.h"
#include "report/report_language.h"
#include "report/report_table.h"
#include "report/report_text.h"
#include "report/table_painter.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QPdfWriter>
#include <QSaveFile>
#include <algorithm>
#include <cmath>

namespace batchfit {
namespace {

using T = ReportText;

ReportTable::Column column(const QString& title, bool stretch, Qt::Alignment align = Qt::AlignLeft) {
    ReportTable::Column c;
    c.title = title;
    c.stretch = stretch;
    c.align = align;
    return c;
}

ReportTable::Row row(const QStringList& cells) {
    ReportTable::Row r;
    r.cells = cells;
    return r;
}

QString partName(ServingPart::Kind k) {
    switch (k) {
    case ServingPart::Kind::Total:
        return batchfit::ReportText::tr("GPU memory");
    case ServingPart::Kind::Context:
        return batchfit::ReportText::tr("CUDA context, NCCL (before the engine)");
    case ServingPart::Kind::Weights:
        return batchfit::ReportText::tr("Weights");
    case ServingPart::Kind::Activation:
        return batchfit::ReportText::tr("Activation peak (profile run)");
    case ServingPart::Kind::NonTorch:
        return batchfit::ReportText::tr("Non-torch memory after start-up");
    case ServingPart::Kind::CudaGraphs:
        return batchfit::ReportText::tr("CUDA graphs");
    case ServingPart::Kind::Margin:
        return batchfit::ReportText::tr("Margin after capture");
    case ServingPart::Kind::KvCache:
        return batchfit::ReportText::tr("KV cache");
    case ServingPart::Kind::KvPerToken:
        return batchfit::ReportText::tr("KV cache per token");
    }
    return {};
}

QString leverTitle(const ServingLever& l) {
    if (l.id == "kv-fp8") return batchfit::ReportText::tr("fp8 KV cache");
    if (l.id == "max-model-len")
        return batchfit::ReportText::tr("max_model_len %1").arg(T::number(l.config.maxModelLen));
    if (l.id == "tp") return batchfit::ReportText::tr("tensor parallel %1 (per GPU)").arg(l.tp);
    if (l.id == "awq") return batchfit::ReportText::tr("AWQ 4-bit weights");
    if (l.id == "utilization")
        return batchfit::ReportText::tr("utilization %1")
            .arg(T::fraction(l.config.memoryFraction.value_or(0)));
    return QString::fromStdString(l.title);
}

/// Everything the page shows, in the report language, computed once by the core.
struct ServingPage {
    const ServingReportRequest& r;
    ServingEstimate e;
    std::int64_t context = 0;
    std::vector<ServingLever> levers;

    QString title() const { return batchfit::ReportText::tr("Serving report"); }
    QString modelLine() const {
        return batchfit::ReportText::tr("%1 · %2 · %3 parameters · weights %4")
            .arg(QString::fromStdString(r.model.name), QString::fromStdString(r.model.modelType),
                 T::number(static_cast<std::int64_t>(r.model.parameterCount())),
                 QString::fromUtf8(weightQuantName(e.config.quant).data()));
    }
    QString engineName() const {
        switch (e.config.engine) {
        case ServingEngine::Vllm:
            return batchfit::ReportText::tr("vLLM %1 (V1 engine)")
                .arg(QStringLiteral("0.%1").arg(e.config.engineVersion));
        case ServingEngine::VllmV0:
            return batchfit::ReportText::tr("vLLM V0 engine");
        case ServingEngine::Sglang:
            return batchfit::ReportText::tr("SGLang");
        case ServingEngine::Hf:
            return batchfit::ReportText::tr("HF generate(), DynamicCache");
        case ServingEngine::HfStatic:
            return batchfit::ReportText::tr("HF generate(), StaticCache");
        }
        return {};
    }
    QString setupLine() const {
        return batchfit::ReportText::tr(
                   "%1 on %2 · tensor parallel %3 × pipeline %4 · memory fraction %5 · max_model_len %6 · KV "
                   "cache %7")
            .arg(engineName(), QString::fromStdString(r.gpu.name))
            .arg(e.tp)
            .arg(e.pp)
            .arg(T::fraction(*e.config.memoryFraction), T::number(e.config.maxModelLen),
                 e.config.kvCacheDtype == KvCacheDtype::Fp8 ? QStringLiteral("fp8")
                                                            : batchfit::ReportText::tr("model dtype"));
    }
    bool starts() const { return e.failure == ServingEstimate::Failure::None; }
    QString verdict() const {
        if (!starts())
            return batchfit::ReportText::tr("The engine would not start: %1")
                .arg(QString::fromStdString(e.message));
        const ServingCell cell = servingCell(r.model, e, r.sequences, context);
        return (cell.fits ? batchfit::ReportText::tr("fits: %1 × %2 tokens use %3 of the KV cache")
                          : batchfit::ReportText::tr("does not fit: %1 × %2 tokens need %3 of the KV cache"))
            .arg(T::number(r.sequences), T::number(context), T::fraction(cell.usedFraction));
    }
    QString engineLines() const {
        const QString line = batchfit::ReportText::tr("GPU KV cache size: %1 tokens · Maximum concurrency "
                                                      "for %2 tokens per request: %3x · at %4 tokens, %5 "
                                                      "sequences at once");
        return line.arg(T::number(e.kvTokens), T::number(e.config.maxModelLen))
            .arg(e.maxConcurrency, 0, 'f', 2)
            .arg(T::number(context), T::number(maxConcurrentSequences(r.model, e, context)));
    }
    ReportTable memory() const {
        ReportTable t;
        t.columns = {column(batchfit::ReportText::tr("Part"), true),
                     column(batchfit::ReportText::tr("On one GPU"), false, Qt::AlignRight)};
        for (const ServingPart& part : servingParts(e))
            t.rows.push_back(row({partName(part.kind), T::bytes(part.bytes)}));
        t.rows.back().ruleAbove = true;
        return t;
    }
    ReportTable map() const {
        std::vector<std::int64_t> contexts;
        for (std::int64_t len : servingAxis(e.config.maxModelLen))
            if (len >= std::max<std::int64_t>(256, e.config.maxModelLen / 64) || len == e.config.maxModelLen)
                contexts.push_back(len);
        const std::int64_t most = std::max<std::int64_t>(maxConcurrentSequences(r.model, e, context), 1);
        const auto sequences = servingAxis(std::clamp<std::int64_t>(most * 2, 8, 1 << 20));
        ReportTable t;
        t.columns.push_back(column(batchfit::ReportText::tr("Tokens \\ sequences"), false, Qt::AlignRight));
        const std::size_t first = sequences.size() > 8 ? sequences.size() - 8 : 0; // the largest eight
        for (std::size_t k = first; k < sequences.size(); ++k)
            t.columns.push_back(column(T::number(sequences[k]), true, Qt::AlignRight));
        auto m = servingFitMap(r.model, e, contexts, sequences);
        if (!m) return t;
        for (std::size_t row = contexts.size(); row-- > 0;) {
            ReportTable::Row out;
            out.cells << T::number(contexts[row]);
            for (std::size_t k = first; k < sequences.size(); ++k) {
                const ServingCell& c = m->at(row, k);
                out.cells << (c.fits ? QStringLiteral("✓ ") : QStringLiteral("✗ ")) +
                                 T::fraction(c.usedFraction);
            }
            t.rows.push_back(out);
        }
        return t;
    }
    ReportTable leverTable() const {
        ReportTable t;
        t.columns = {column(batchfit::ReportText::tr("Change"), true),
                     column(batchfit::ReportText::tr("Sequences at once"), false, Qt::AlignRight),
                     column(batchfit::ReportText::tr("KV cache (tokens)"), false, Qt::AlignRight)};
        for (const ServingLever& l : levers)
            t.rows.push_back(row({leverTitle(l),
                                  l.estimate.failure == ServingEstimate::Failure::None
                                      ? T::number(l.sequencesAtContext)
                                      : batchfit::ReportText::tr("does not start"),
                                  T::number(l.estimate.kvTokens)}));
        return t;
    }
};

/// Paints the page into `width` x `height` points from the top; returns the height used.
double paint(ReportCanvas& canvas, const ServingPage& page, double left, double top, double width) {
    double y = top;
    auto text = [&](const QString& s, double points, bool bold, const QColor& color) {
        const QFont f = canvas.font(points, bold);
        const double h = canvas.wrappedHeight(s, f, width);
        canvas.drawText(QRectF(left, y, width, h), Qt::AlignLeft | Qt::TextWordWrap, s, f, color);
        y += h + 4;
    };
    auto table = [&](const QString& heading, const ReportTable& t) {
        y += 6;
        text(heading, 11, true, ComponentPalette::text());
        TablePainter painter(canvas, t, 8.5);
        y += painter.paint(QRectF(left, y, width, painter.height(static_cast<int>(t.rows.size()))), 0,
                           static_cast<int>(t.rows.size()));
    };
    text(page.title().toUpper(), 9, true, ComponentPalette::capacity());
    text(QString::fromStdString(page.r.model.name), 18, true, ComponentPalette::text());
    text(page.modelLine(), 9, false, ComponentPalette::mutedText());
    text(page.setupLine(), 9, false, ComponentPalette::text());
    const bool fits = page.starts() && servingCell(page.r.model, page.e, page.r.sequences, page.context).fits;
    text(page.verdict(), 12, true, fits ? ComponentPalette::fits() : ComponentPalette::doesNotFit());
    text(page.engineLines(), 9, false, ComponentPalette::text());
    table(batchfit::ReportText::tr("Memory on one GPU"), page.memory());
    if (page.starts())
        table(batchfit::ReportText::tr("Sequences × context: the share of the KV cache they take"),
              page.map());
    if (!page.levers.empty())
        table(batchfit::ReportText::tr("What would help (each change on its own)"), page.leverTable());
    y += 6;
    const QDateTime at = page.r.generatedAt.isValid() ? page.r.generatedAt : QDateTime::currentDateTime();
    text(batchfit::ReportText::tr(
             "Generated by BatchFit %1 on %2. The rules and their sources: docs/serving.md.")
             .arg(QStringLiteral(BATCHFIT_VERSION), T::date(at)),
         8, false, ComponentPalette::mutedText());
    return y - top;
}

Result<QByteArray> render(const ServingPage& page, bool pdf) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (pdf) {
        QPdfWriter writer(&buffer);
        writer.setPageLayout(
            QPageLayout(page.r.pageSize, QPageLayout::Portrait, QMarginsF(0, 0, 0, 0), QPageLayout::Point));
        writer.setResolution(1200);
        writer.setTitle(page.title() + QStringLiteral(": ") + QString::fromStdString(page.r.model.name));
        writer.setCreator(QStringLiteral("BatchFit " BATCHFIT_VERSION));
        QPainter painter;
        if (!painter.begin(&writer)) return makeError("the PDF renderer could not start");
        ReportCanvas canvas(painter, writer.resolution() / 72.0);
        const QSizeF size = page.r.pageSize.sizePoints();
        paint(canvas, page, 48, 44, size.width() - 96);
        if (!painter.end()) return makeError("the PDF renderer failed");
        return bytes;
    }
    const double ppp = page.r.dpi / 72.0, width = page.r.pngWidth / ppp;
    double height = 0;
    { // measure on a probe, then paint at the height the page needs
        QImage probe(1, 1, QImage::Format_RGB32);
        probe.setDotsPerMeterX(static_cast<int>(std::lround(page.r.dpi / 0.0254)));
        probe.setDotsPerMeterY(probe.dotsPerMeterX());
        QPainter p(&probe);
        ReportCanvas canvas(p, ppp);
        height = paint(canvas, page, 18, 18, width - 36) + 36;
    }
    QImage image(page.r.pngWidth, static_cast<int>(std::ceil(height * ppp)), QImage::Format_RGB32);
    image.setDotsPerMeterX(static_cast<int>(std::lround(page.r.dpi / 0.0254)));
    image.setDotsPerMeterY(image.dotsPerMeterX());
    image.fill(Qt::white);
    {
        QPainter p(&image);
        ReportCanvas canvas(p, ppp);
        paint(canvas, page, 18, 18, width - 36);
    }
    if (!image.save(&buffer, "PNG")) return makeError("the PNG encoder failed");
    return bytes;
}

Status fail(const QString& path, const QString& why) {
    return makeError(("cannot write the serving report " + path + ": " + why).toStdString());
}

} // namespace

Status exportServingReport(const ServingReportRequest& request, const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("pdf") && suffix != QLatin1String("png"))
        return fail(path, QStringLiteral("the serving report is a .pdf or a .png"));
    const ReportLanguage language(request.language);
    if (!language.ok()) return fail(path, language.error());
    auto e = estimateServing(request.model, request.config, request.gpu, request.tp, request.pp);
    if (!e) return fail(path, QString::fromStdString(e.error().message));
    ServingPage page{request,
                     *e,
                     request.context > 0 ? std::min(request.context, e->config.maxModelLen)
                                         : e->config.maxModelLen,
                     {}};
    page.levers =
        servingLevers(request.model, request.config, request.gpu, request.tp, request.pp, page.context);
    auto bytes = render(page, suffix == QLatin1String("pdf"));
    if (!bytes) return fail(path, QString::fromStdString(bytes.error().message));
    QSaveFile file(path); // atomic: a failure leaves an existing report as it was
    if (!file.open(QIODevice::WriteOnly)) return fail(path, file.errorString());
    if (file.write(*bytes) != bytes->size()) {
        const QString why = file.errorString();
        file.cancelWriting();
        return fail(path, why);
    }
    if (!file.commit()) return fail(path, file.errorString());
    return Ok{};
}

} // namespace batchfit
