from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('dashboard', '0003_auditentry'),
    ]

    operations = [
        migrations.CreateModel(
            name='EvalRun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('suite', models.CharField(db_index=True, max_length=100)),
                ('fusion', models.JSONField(blank=True, default=dict)),
                ('cases', models.PositiveIntegerField()),
                ('metrics', models.JSONField(help_text='mode -> hit1, hit5, n, mrr')),
            ],
            options={
                'ordering': ['-at', '-id'],
            },
        ),
    ]
