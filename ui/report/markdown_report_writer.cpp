#include "report/markdown_report_writer.h"

#include "report/report_sections.h"
#include "report/report_text.h"

namespace batchfit {
namespace {

QString cell(QString s) {
    return s.replace(QLatin1Char('|'), QLatin1String("\\|")).replace(QLatin1Char('\n'), QLatin1Char(' '));
}

QString table(const ReportTable& t) {
    QString out = QStringLiteral("|");
    QString rule = QStringLiteral("|");
    for (const auto& c : t.columns) {
        out += QLatin1Char(' ') + cell(c.title) + QLatin1String(" |");
        rule += (c.align & Qt::AlignRight) ? QLatin1String("---:|") : QLatin1String("---|");
    }
    out += QLatin1Char('\n') + rule + QLatin1Char('\n');
    for (const auto& r : t.rows) {
        out += QLatin1Char('|');
        for (const QString& v : r.cells) {
            const QString text = r.bold ? QStringLiteral("**%1**").arg(cell(v)) : cell(v);
            out += QLatin1Char(' ') + text + QLatin1String(" |");
        }
        out += QLatin1Char('\n');
    }
    return out;
}

} // namespace

QByteArray MarkdownReportWriter::render() const {
    const ReportSections s(m_data);
    QString md;
    md += QStringLiteral("# %1: %2\n\n").arg(s.reportTitle(), cell(s.modelName()));
    if (!m_data.request.model.description.empty())
        md += QString::fromStdString(m_data.request.model.description) + QStringLiteral("\n\n");
    md += s.modelSummary() + QStringLiteral("\n\n");
    for (const auto& [label, value] : s.setup()) md += QStringLiteral("- **%1:** %2\n").arg(label, value);
    md += QStringLiteral("\n## %1\n\n**%2.** %3\n\n%4\n\n")
              .arg(ReportText::tr("Verdict"), s.verdictHeadline(), s.verdictDetail(), s.maxBatchLine());
    md += QStringLiteral("## %1\n\n%2\n\n").arg(s.componentTableTitle(), s.peakLine());
    md += table(s.componentTable());
    md += QStringLiteral("\n## %1\n\n").arg(s.layerTableTitle());
    md += table(s.layerTable());
    md += QStringLiteral("\n## %1\n\n").arg(s.assumptionsTitle());
    for (const QString& a : s.assumptions()) md += QStringLiteral("- ") + a + QLatin1Char('\n');
    md += QStringLiteral("\n_%1_\n").arg(s.generatedLine());
    return md.toUtf8();
}

} // namespace batchfit
