import { SettingDatabase } from '../components/SettingDatabase.tsx';
import { SettingExtraction } from '../components/SettingExtraction.tsx';
import { SettingIdentity } from '../components/SettingIdentity.tsx';
import { SettingSpendCap } from '../components/SettingSpendCap.tsx';
import { SettingWebhook } from '../components/SettingWebhook.tsx';
import { useSession } from '../session.tsx';

/** The account's webhook, extraction endpoint, spend cap, database and identity provider; only a writable admin key changes them. */
export function Settings() {
  const { me, canWrite } = useSession();
  return (
    <>
      <h1>Settings</h1>
      {!canWrite && <p className="muted">This key is read-only: it shows the current settings but cannot change them.</p>}
      {canWrite && me?.key.role === 'agent' && (
        <p className="muted">This is an agent key: it shows the current settings, and only an admin key of the account can change them.</p>
      )}
      {/* Cards one under the other, with room between them. */}
      <div style={{ display: 'grid', gap: '1rem' }}>
        <SettingWebhook />
        <SettingExtraction />
        <SettingSpendCap />
        <SettingDatabase />
        <SettingIdentity />
      </div>
    </>
  );
}
