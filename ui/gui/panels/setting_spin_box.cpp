#include "gui/panels/setting_spin_box.h"

#include <QFontMetrics>
#include <QSignalBlocker>
#include <algorithm>
#include <cmath>

namespace batchfit {

namespace {

double unitBytes(const std::string& unit) {
    if (unit == "KiB") return 1024.0;
    if (unit == "MiB") return 1024.0 * 1024.0;
    if (unit == "GiB") return 1024.0 * 1024.0 * 1024.0;
    return 1.0;
}

int decimalsFor(const SettingInfo& s) {
    if (s.type == SettingType::Integer) return 0;
    if (s.type == SettingType::Bytes) return s.unit == "GiB" ? 2 : 0;
    return s.unit == "%" ? 1 : 2;
}

} // namespace

SettingSpinBox::SettingSpinBox(const std::string& key, QWidget* parent)
    : QDoubleSpinBox(parent), m_setting(findSetting(key)) {
    setKeyboardTracking(false); // one edit per typed number, not one per digit
    setAccelerated(true);
    if (!m_setting) return;
    const SettingInfo& s = *m_setting;
    if (s.type == SettingType::Bytes) m_scale = unitBytes(s.unit);
    m_percent = s.type == SettingType::Number && s.unit == "%";
    applyRange(decimalsFor(s));
    if (s.type == SettingType::Bytes) setSuffix(QLatin1Char(' ') + QString::fromStdString(s.unit));
    if (m_percent) setSuffix(QStringLiteral(" %"));
    m_value = s.defaultValue;
    if (std::holds_alternative<std::monostate>(m_value))
        m_value = s.type == SettingType::Number ? SettingValue(s.min)
                                                : SettingValue(static_cast<std::int64_t>(s.min));
    connect(this, &QDoubleSpinBox::valueChanged, this, &SettingSpinBox::onValueChanged);
    setSettingValue(m_value);
}

void SettingSpinBox::applyRange(int decimals) {
    const SettingInfo& s = *m_setting;
    setDecimals(decimals);
    const double step = std::pow(10.0, -decimals);
    double lo = displayOf(s.min), hi = displayOf(s.max);
    if (s.minExcluded || (s.type == SettingType::Bytes && s.min > 0)) lo = std::max(lo, step);
    if (s.maxExcluded) hi -= step;
    setRange(lo, hi);
}

void SettingSpinBox::setDisplayUnit(double perUnit, int decimals, const QString& suffix) {
    if (!m_setting) return;
    m_scale = perUnit;
    applyRange(decimals);
    setSuffix(suffix);
    setSettingValue(m_value);
}

double SettingSpinBox::displayOf(double v) const {
    return m_percent ? v * 100.0 : v / m_scale;
}

double SettingSpinBox::displayOf(const SettingValue& v) const {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return displayOf(static_cast<double>(*i));
    if (const auto* d = std::get_if<double>(&v)) return displayOf(*d);
    return minimum();
}

SettingValue SettingSpinBox::valueOfDisplay(double display) const {
    if (!m_setting) return {};
    if (m_setting->type == SettingType::Number) return m_percent ? display / 100.0 : display;
    return static_cast<std::int64_t>(std::llround(display * m_scale));
}

void SettingSpinBox::setSettingValue(const SettingValue& v) {
    if (!m_setting || std::holds_alternative<std::monostate>(v)) return;
    m_value = v;
    const double shown = displayOf(v);
    {
        const QSignalBlocker block(this);
        m_programmatic = true;
        setValue(shown);
        m_programmatic = false;
    }
    // Exact when what the box shows reads back as the value held (and the value is in the box's range).
    m_exact = valueOfDisplay(value()) == m_value;
    updatePrefix();
    updateTip();
}

std::int64_t SettingSpinBox::integer() const {
    if (const auto* i = std::get_if<std::int64_t>(&m_value)) return *i;
    if (const auto* d = std::get_if<double>(&m_value)) return static_cast<std::int64_t>(*d);
    return 0;
}

double SettingSpinBox::real() const {
    if (const auto* d = std::get_if<double>(&m_value)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&m_value)) return static_cast<double>(*i);
    return 0;
}

int SettingSpinBox::surplusWidth() const {
    const QFontMetrics fm(font());
    const int widest = fm.horizontalAdvance(textFromValue(maximum()));
    const int typical = fm.horizontalAdvance(textFromValue(std::min(maximum(), 99999.0)));
    return std::max(0, widest - typical);
}

QSize SettingSpinBox::sizeHint() const {
    QSize s = QDoubleSpinBox::sizeHint();
    s.setWidth(s.width() - surplusWidth());
    return s;
}

QSize SettingSpinBox::minimumSizeHint() const {
    QSize s = QDoubleSpinBox::minimumSizeHint();
    s.setWidth(s.width() - surplusWidth());
    return s;
}

void SettingSpinBox::setLabelPrefix(const QString& prefix) {
    m_prefix = prefix;
    updatePrefix();
}

void SettingSpinBox::updatePrefix() {
    setPrefix(m_exact ? m_prefix : QStringLiteral("≈ ") + m_prefix);
}

void SettingSpinBox::onValueChanged(double display) {
    if (m_programmatic) return;
    m_value = valueOfDisplay(display);
    m_exact = true;
    updatePrefix();
    updateTip();
    emit settingEdited(m_value);
}

void SettingSpinBox::updateTip() {
    if (m_baseTip.isEmpty() || !toolTip().startsWith(m_baseTip)) m_baseTip = toolTip();
    if (m_exact) {
        setToolTip(m_baseTip);
        return;
    }
    const QString exact = m_setting ? QString::fromStdString(settingText(*m_setting, m_value)) : QString();
    setToolTip(m_baseTip + (m_baseTip.isEmpty() ? QString() : QStringLiteral("\n")) +
               tr("Exactly %1: the box shows it rounded; the value is kept as it is until you change it.")
                   .arg(exact));
}

} // namespace batchfit
