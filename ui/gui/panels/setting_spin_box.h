#pragma once
// A number box for one setting of the table in core (batchfit/settings.h): its range and unit come from the
// table, and it holds the exact value, so a value the box cannot show is never changed behind the user's
// back.
#include "batchfit/settings.h"

#include <QDoubleSpinBox>

namespace batchfit {

/// A spin box bound to an Integer, Number or Bytes setting. The range is the table's (in the table's unit:
/// GiB, MiB, KiB or % for a fraction), so every value a file or the command line may hold is in range. The
/// value set by the program is kept exactly: when the box rounds it for display (a capacity of 1 byte more
/// than 24 GiB, a margin of 0.1234), the text starts with "≈ " and the tool tip gives the exact value, and
/// settingValue() still returns it until the user edits the box. Only the user's edits emit settingEdited().
class SettingSpinBox : public QDoubleSpinBox {
    Q_OBJECT

public:
    /// `key`: a settings-table key ("checkpoint_every", "lora.rank"); the box is empty if there is none.
    explicit SettingSpinBox(const std::string& key, QWidget* parent = nullptr);

    /// Shows `v` (an std::int64_t or a double as the setting's type holds it) without emitting anything.
    void setSettingValue(const SettingValue& v);
    /// The exact value: what setSettingValue() was given, or what the user typed.
    SettingValue settingValue() const { return m_value; }
    /// The value as an integer (Integer and Bytes settings) or a real (Number).
    std::int64_t integer() const;
    double real() const;
    /// False when the display rounds the value held.
    bool isExact() const { return m_exact; }
    const SettingInfo* setting() const { return m_setting; }

    /// Shows the value in units of `perUnit` (1e6: "M elements") with `decimals`, instead of the table's
    /// unit.
    void setDisplayUnit(double perUnit, int decimals, const QString& suffix);
    /// Sized for a value of up to 5 digits, not for the table's maximum (a PiB in MiB would widen the form):
    /// a longer value scrolls within the box.
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    /// A prefix such as "k = " (QDoubleSpinBox::setPrefix is taken by the "≈ " mark).
    void setLabelPrefix(const QString& prefix);

signals:
    /// The user changed the value (typed, stepped or wheeled); `v` is the new exact value.
    void settingEdited(const batchfit::SettingValue& v);

private:
    void applyRange(int decimals);
    int surplusWidth() const; ///< how much wider the maximum's text is than a 5-digit value's
    double displayOf(double v) const;
    double displayOf(const SettingValue& v) const;
    void updatePrefix();
    SettingValue valueOfDisplay(double display) const;
    void onValueChanged(double display);
    void updateTip();

    const SettingInfo* m_setting = nullptr;
    double m_scale = 1;     ///< setting units per displayed unit (bytes per GiB)
    bool m_percent = false; ///< a fraction shown as a percentage
    SettingValue m_value;
    bool m_exact = true;
    bool m_programmatic = false;
    QString m_baseTip;
    QString m_prefix;
};

} // namespace batchfit
